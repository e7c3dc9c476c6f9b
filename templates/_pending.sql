{#- The guard of a table whose rows a trigger applies in the statement that
    writes them: a routine writes each row pending, the trigger clears it
    as it applies the row, and a CHECK refuses a row still pending. MySQL
    replaces a trigger with DROP TRIGGER and then CREATE TRIGGER, and a
    write between the two (on a cluster, from any member) would otherwise
    be recorded, committed and acknowledged with nothing applied: it fails
    instead, and is sent again. A row written without the column (the plain
    mode's write ids) leaves it NULL, which passes. -#}

{#- The column, in CREATE TABLE. -#}
{% macro column(p) %}
    `{{ p.names.pending_column }}` BOOLEAN NULL COMMENT '{{ p.names.pending_comment }}',
{%- endmacro %}

{#- The CHECK of `table`, last in CREATE TABLE. -#}
{% macro check(p, table) %}
    CONSTRAINT `{{ p.applied_check(table) }}` CHECK (`{{ p.names.pending_column }}` IS NULL)
{%- endmacro %}


{#- After an INSERT's VALUES list that goes on ON DUPLICATE KEY UPDATE:
    MySQL (8.0.19 on) names the row the INSERT would have written, for
    `update` to read; MariaDB has no such name, and reads it with VALUES(),
    which MySQL deprecates (warning 1287). -#}
{% macro row_alias() -%}
/*!80019 AS slotted_new */
{%- endmacro %}

{#- In ON DUPLICATE KEY UPDATE: the column as the trigger left it in the row
    the INSERT would have written, so that a row updated while the trigger
    is missing stays pending, and is refused. -#}
{% macro update(p) -%}
`{{ p.names.pending_column }}` = /*!80019 slotted_new.`{{ p.names.pending_column }}` */ /*M! VALUES(`{{ p.names.pending_column }}`) */
{%- endmacro %}

{#- In the trigger: the row is applied. -#}
{% macro clear(indent, p) -%}
{{ indent }}SET NEW.`{{ p.names.pending_column }}` = NULL;
{%- endmacro %}
