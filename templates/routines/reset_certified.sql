{%- import "_macros.sql" as m -%}
{%- import "routines/_reset.sql" as reset -%}
{% call reset::drop_and_describe(p) %}{% endcall %}
-- The reset changes every slot twice, so that the cluster certifies it
-- against increments this node has not applied yet, in one statement (the
-- trigger {{ p.change_trigger }} makes the change it records).
{% call reset::signature(p) %}{% endcall %}
{% call m::record_change("    ", p, "reset", "NULL", "NULL", "v_value", "p_reset_start_date IS TRUE") %}{% endcall %}
END$$
