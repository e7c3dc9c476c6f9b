{%- import "_macros.sql" as m -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.reset }}` */$$
-- Sets counter p_name to p_value (NULL: 0), kept in slot 1, every other slot
-- to 0, and its start date to now when p_reset_start_date is TRUE.
{%- if p.auto_create %}
-- Lazy counters keep only the rows that were hit, so slot 1 may be missing:
-- the reset rewrites the counter as one row, in a transaction of its own,
-- like DDL: it commits a transaction open on the connection.
{%- else if p.galera %}
-- On Galera the reset changes every slot twice, in a transaction of its own,
-- like DDL: it commits a transaction open on the connection.
{%- endif %}
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.reset }}`(
    IN p_name {{ p.name_type }},
    IN p_value BIGINT,
    IN p_reset_start_date BOOLEAN
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_message {{ p.message_type }};

{% call m::check_name_length("    ", p) %}{% endcall %}
{%- if p.auto_create %}
    -- The transaction and its handler live in an inner block, so that a bad
    -- argument above rolls back nothing.
    BEGIN
        DECLARE v_slots INT;
        DECLARE v_description {{ p.description_variable_type }};
        DECLARE v_start_date DATETIME;
{% call m::own_transaction("        ") %}{% endcall %}
        SELECT COUNT(*), MAX(`description`), MIN(`start_date`) INTO v_slots, v_description, v_start_date
          FROM `{{ p.table }}` WHERE `counter_name` = p_name FOR UPDATE;
        IF v_slots = 0 THEN
{% call m::unknown_counter("            ", p) %}{% endcall %}
        END IF;
        DELETE FROM `{{ p.table }}` WHERE `counter_name` = p_name;
        INSERT INTO `{{ p.table }}` (`counter_name`, `counter_id`, `description`, `start_date`, `counter`)
        VALUES (p_name, 1, v_description, IF(p_reset_start_date IS TRUE, NOW(), v_start_date), COALESCE(p_value, 0));
        COMMIT;
    END;
{%- else if p.galera %}
    BEGIN
{% call m::own_transaction("        ") %}{% endcall %}
        -- Galera certifies a transaction by the rows it changes, and this
        -- node may not yet have applied an increment another node has
        -- acknowledged: a slot still 0 here would not change, and that
        -- increment would outlive the reset. Changing every slot first puts
        -- each in the write set, so the reset fails certification (1213)
        -- instead, and run again it sees the increment.
        UPDATE `{{ p.table }}` SET `counter` = IF(`counter` = 0, 1, 0) WHERE `counter_name` = p_name;
        IF ROW_COUNT() = 0 THEN
{% call m::unknown_counter("            ", p) %}{% endcall %}
        END IF;
        UPDATE `{{ p.table }}`
           SET `counter` = IF(`counter_id` = 1, COALESCE(p_value, 0), 0),
               `start_date` = IF(p_reset_start_date IS TRUE, NOW(), `start_date`)
         WHERE `counter_name` = p_name;
        COMMIT;
    END;
{%- else %}

    -- One statement locks and rewrites every slot: an increment lands wholly
    -- before the reset or wholly after it.
    UPDATE `{{ p.table }}`
       SET `counter` = IF(`counter_id` = 1, COALESCE(p_value, 0), 0),
           `start_date` = IF(p_reset_start_date IS TRUE, NOW(), `start_date`)
     WHERE `counter_name` = p_name;
    -- A reset to the value a counter already has changes no row.
    IF ROW_COUNT() = 0 THEN
        IF NOT EXISTS (SELECT 1 FROM `{{ p.table }}` WHERE `counter_name` = p_name) THEN
{% call m::unknown_counter("            ", p) %}{% endcall %}
        END IF;
    END IF;
{%- endif %}
END$$
