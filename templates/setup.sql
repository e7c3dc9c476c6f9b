-- setup.sql: the whole slotted-counter package, table and routines, in one
-- self-contained script. Install with: mysql your_database < setup.sql
-- Running it again replaces the routines and keeps every count.
{% include "_header.sql" %}

{% include "_sql_mode.sql" %}
{% let creates_routines = true %}
{% include "_probe.sql" %}

{% include "_grants_keeper.sql" %}

{% include "_tables.sql" %}

{{ routines }}
{% include "_sql_mode_back.sql" %}
