-- setup.sql: the whole slotted-counter package, table and routines, in one
-- self-contained script. Install with: mysql your_database < setup.sql
-- Running it again replaces the routines and keeps every count.
{% include "_header.sql" %}

{% include "_probe.sql" %}

{% include "_grants_keeper.sql" %}

{% include "_table.sql" %}

{% include "_totals_view.sql" %}

{% include "_writes_table.sql" %}

{% include "_changes_table.sql" %}

{% include "_periods_tables.sql" %}

{% include "_tracked_writes_table.sql" %}

{% include "_spreads_table.sql" %}

{% include "_upgrades.sql" %}

{% include "_routines.sql" %}
