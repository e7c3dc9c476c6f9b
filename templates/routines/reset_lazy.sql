{%- import "_macros.sql" as m -%}
{%- import "routines/_changes.sql" as change -%}
{%- import "routines/_reset.sql" as reset -%}
{% call reset::drop_and_describe(p) %}{% endcall %}
-- A lazy counter may lack slot 1: the reset rewrites it as one row, made by
-- the trigger {{ p.names.change_trigger }}.
{% call reset::signature(p) %}{% endcall %}
{% call change::make("    ", p, "reset", "NULL", "NULL", "v_value", "p_reset_start_date IS TRUE") %}{% endcall %}
END$$
