-- create_tables.sql: the `{{ p.table }}` table of the slotted-counter package.
{% include "_header.sql" %}

{% include "_table.sql" %}

{% include "_totals_view.sql" %}

{%- if p.has_writes_table %}

{% include "_writes_table.sql" %}
{%- endif %}
{%- if p.has_changes_table %}

{% include "_changes_table.sql" %}
{%- endif %}
{%- if p.periods_feature %}

{% include "_periods_tables.sql" %}

{% include "_tracked_writes_table.sql" %}
{%- endif %}
{%- if p.bounds %}

{% include "_spreads_table.sql" %}
{%- endif %}
{%- if p.bounds || !p.applied_tables.is_empty() %}

{% include "_upgrades.sql" %}
{%- endif %}
{%- if p.periods_feature %}

{% include "_rooms_view.sql" %}
{%- endif %}
