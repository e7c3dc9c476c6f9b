{%- import "_macros.sql" as m -%}
{%- import "routines/_reset.sql" as reset -%}
{% call reset::drop_and_describe(p) %}{% endcall %}
-- Lazy counters keep only the rows that were hit, so slot 1 may be missing:
-- the reset rewrites the counter as one row, in a transaction of its own,
-- like DDL: it commits a transaction open on the connection.
{% call reset::signature(p) %}{% endcall %}
{% call m::end_left_open("    ") %}{% endcall %}
    -- The transaction and its handler live in an inner block, so that a bad
    -- argument above rolls back nothing.
    BEGIN
        DECLARE v_slots INT;
        DECLARE v_description {{ p.description_variable_type }};
        DECLARE v_start_date DATETIME;
{% call m::own_transaction("        ") %}{% endcall %}
        SELECT COUNT(*), MAX(`description`), MIN(`start_date`) INTO v_slots, v_description, v_start_date
          FROM `{{ p.table }}` FORCE INDEX (PRIMARY) WHERE `counter_name` = p_name FOR UPDATE;
        IF v_slots = 0 THEN
{% call m::unknown_counter("            ", p) %}{% endcall %}
        END IF;
        DELETE `{{ p.table }}` FROM `{{ p.table }}` FORCE INDEX (PRIMARY) WHERE `counter_name` = p_name;
        INSERT INTO `{{ p.table }}` (`counter_name`, `counter_id`, `description`, `start_date`, `counter`)
        VALUES (p_name, 1, v_description, IF(p_reset_start_date IS TRUE, NOW(), v_start_date), v_value);
{% call m::commit_own_transaction("        ") %}{% endcall %}
    END;
END$$
