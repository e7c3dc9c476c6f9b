{%- import "_macros.sql" as m -%}
{%- import "routines/_changes.sql" as change -%}
{%- import "routines/_reset.sql" as reset -%}
{% call reset::drop_and_describe(p) %}{% endcall %}
-- The reset changes every slot twice, so that the cluster certifies it
-- against increments this node has not applied yet{% if p.changes_in_own_transaction %}: on MariaDB in
-- autocommit mode in a transaction of its own (made by a trigger, a reset
-- that lost certification could leave the session failing every CALL), else
-- in one statement (the trigger {{ p.change_trigger }} makes the change it records){% else %}, in one statement (the
-- trigger {{ p.change_trigger }} makes the change it records){% endif %}.
{% call reset::signature(p) %}{% endcall %}
{% call change::make("    ", p, "reset", "NULL", "NULL", "v_value", "p_reset_start_date IS TRUE") %}{% endcall %}
END$$
