-- create_tables.sql: the `{{ p.table }}` table of the slotted-counter package.
{% include "_header.sql" %}

{% include "_table.sql" %}

{% include "_totals_view.sql" %}

{% include "_writes_table.sql" %}

{% include "_changes_table.sql" %}

{% include "_periods_tables.sql" %}

{% include "_tracked_writes_table.sql" %}

{% include "_spreads_table.sql" %}

{% include "_upgrades.sql" %}
