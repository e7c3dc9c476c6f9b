-- create_tables.sql: the `{{ p.names.table }}` table of the slotted-counter package.
{% include "_header.sql" %}

{% include "_sql_mode.sql" %}

{% include "_tables.sql" %}
{% include "_sql_mode_back.sql" %}
