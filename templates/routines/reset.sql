{%- import "_macros.sql" as m -%}
{%- import "routines/_bounds.sql" as bounds -%}
{%- import "routines/_reset.sql" as reset -%}
{% call reset::drop_and_describe(p) %}{% endcall %}
{% call reset::signature(p) %}{% endcall %}
{%- if !p.has.slot_bound_triggers %}
{% call m::check_slot_bound("    ", p, "v_value") %}{% endcall %}
{%- endif %}

    -- One UPDATE locks every slot: an increment lands wholly before or after.
    UPDATE `{{ p.names.table }}` FORCE INDEX (PRIMARY)
       SET `counter` = IF(`counter_id` = 1, v_value, 0),
           `start_date` = IF(p_reset_start_date IS TRUE, NOW(), `start_date`)
     WHERE `counter_name` = p_name{% if p.has.bounds %} AND `lowest` IS NULL AND `highest` IS NULL{% endif %};
{%- if p.has.bounds %}
    -- No row changed: bounded, unknown or already so; the spread tells which.
    IF ROW_COUNT() = 0 THEN
{% call bounds::make("        ", p, "reset", "v_value", "p_reset_start_date IS TRUE", "NULL", "NULL") %}{% endcall %}
    END IF;
{%- else %}
    -- No row changed: the counter does not exist, or already reads so.
    IF ROW_COUNT() = 0 AND NOT EXISTS (SELECT 1 FROM `{{ p.names.table }}` WHERE `counter_name` = p_name) THEN
{% call m::unknown_counter("        ", p) %}{% endcall %}
    END IF;
{%- endif %}
END$$
