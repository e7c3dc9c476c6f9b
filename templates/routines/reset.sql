{%- import "_macros.sql" as m -%}
{%- import "routines/_reset.sql" as reset -%}
{% call reset::drop_and_describe(p) %}{% endcall %}
{% call reset::signature(p) %}{% endcall %}

    -- One statement locks and rewrites every slot: an increment lands wholly
    -- before the reset or wholly after it.
    UPDATE `{{ p.table }}` FORCE INDEX (PRIMARY)
       SET `counter` = IF(`counter_id` = 1, v_value, 0),
           `start_date` = IF(p_reset_start_date IS TRUE, NOW(), `start_date`)
     WHERE `counter_name` = p_name;
    -- A reset to the value a counter already has changes no row.
    IF ROW_COUNT() = 0 THEN
        IF NOT EXISTS (SELECT 1 FROM `{{ p.table }}` WHERE `counter_name` = p_name) THEN
{% call m::unknown_counter("            ", p) %}{% endcall %}
        END IF;
    END IF;
END$$
