{%- import "_macros.sql" as m -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.compact }}` */$$
-- Folds every slot of counter p_name into slot 1, total unchanged{% if !p.auto_create %}: the
-- other slots become 0{% endif %}. Runs as a transaction of its own, like DDL: it
-- commits a transaction open on the connection.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.compact }}`(
    IN p_name {{ p.name_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_message {{ p.message_type }};

{% call m::end_left_open("    ") %}{% endcall %}
{% call m::check_name_form("    ", p) %}{% endcall %}
    -- The transaction and its handler live in an inner block, so that a bad
    -- argument above rolls back nothing.
    BEGIN
        DECLARE v_slots INT;
        DECLARE v_total BIGINT;
{%- if p.auto_create %}
        DECLARE v_description {{ p.description_variable_type }};
        DECLARE v_start_date DATETIME;
{%- endif %}
{% call m::own_transaction("        ") %}{% endcall %}
{%- if p.auto_create %}
        SELECT COUNT(*), CAST(SUM(`counter`) AS SIGNED), MAX(`description`), MIN(`start_date`)
          INTO v_slots, v_total, v_description, v_start_date
          FROM `{{ p.table }}` FORCE INDEX (PRIMARY) WHERE `counter_name` = p_name FOR UPDATE;
{%- else %}
        SELECT COUNT(*), CAST(SUM(`counter`) AS SIGNED) INTO v_slots, v_total
          FROM `{{ p.table }}` FORCE INDEX (PRIMARY) WHERE `counter_name` = p_name FOR UPDATE;
{%- endif %}
        IF v_slots = 0 THEN
{% call m::unknown_counter("            ", p) %}{% endcall %}
        END IF;
{%- if p.auto_create %}
        -- Lazy counters keep only the rows that were hit: slot 1 may be missing.
        DELETE `{{ p.table }}` FROM `{{ p.table }}` FORCE INDEX (PRIMARY) WHERE `counter_name` = p_name;
        INSERT INTO `{{ p.table }}` (`counter_name`, `counter_id`, `description`, `start_date`, `counter`)
        VALUES (p_name, 1, v_description, v_start_date, v_total);
{%- else %}
        UPDATE `{{ p.table }}` FORCE INDEX (PRIMARY) SET `counter` = IF(`counter_id` = 1, v_total, 0)
         WHERE `counter_name` = p_name;
{%- endif %}
{% call m::commit_own_transaction("        ") %}{% endcall %}
    END;
END$$
