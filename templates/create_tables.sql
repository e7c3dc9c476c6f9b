-- create_tables.sql: the `{{ p.table }}` table of the slotted-counter package.
{% include "_header.sql" %}

{% include "_tables.sql" %}
