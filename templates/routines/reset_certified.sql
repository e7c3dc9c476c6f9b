{%- import "_macros.sql" as m -%}
{%- import "routines/_changes.sql" as change -%}
{%- import "routines/_reset.sql" as reset -%}
{% call reset::drop_and_describe(p) %}{% endcall %}
-- {{ p.cluster.name }} certifies a transaction by the rows it changes: the reset
-- changes every slot twice, so that an increment acknowledged on another
-- node but not yet applied here fails it ({{ p.cluster.certification_error }}) instead of outliving it.
{%- if p.cluster.changes_in_own_transaction %}
-- On MariaDB in autocommit mode a transaction of its own: made by a trigger,
-- a reset that lost certification can leave the session failing every CALL.
-- Else the trigger {{ p.names.change_trigger }} makes it.
{%- else %}
-- The trigger {{ p.names.change_trigger }} makes it.
{%- endif %}
{% call reset::signature(p) %}{% endcall %}
{% call change::make("    ", p, "reset", "NULL", "NULL", "v_value", "p_reset_start_date IS TRUE") %}{% endcall %}
END$$
