-- create_procedures.sql: the routines of the slotted-counter package.
-- They expect the `{{ p.names.table }}` table of create_tables.sql.
{% include "_header.sql" %}

{% include "_sql_mode.sql" %}
{% let creates_routines = true %}
{% include "_probe.sql" %}

{% include "_grants_keeper.sql" %}

{{ routines }}
{% include "_sql_mode_back.sql" %}
