{%- import "_macros.sql" as m -%}
{%- import "routines/_changes.sql" as change -%}
{%- import "routines/_reset.sql" as reset -%}
{% call reset::drop_and_describe(p) %}{% endcall %}
-- Lazy counters keep only the rows that were hit, so slot 1 may be missing:
-- the reset writes the counter again as one row, in one statement (the
-- trigger {{ p.change_trigger }} makes the change it records).
{% call reset::signature(p) %}{% endcall %}
{% call change::make("    ", p, "reset", "NULL", "NULL", "v_value", "p_reset_start_date IS TRUE") %}{% endcall %}
END$$
