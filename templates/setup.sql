-- setup.sql: the whole slotted-counter package, table and routines, in one
-- self-contained script. Install with: mysql your_database < setup.sql
-- Running it again replaces the routines and keeps every count.
{% include "_header.sql" %}

{% let checks_name_width = true %}
{% include "_probe.sql" %}

{% include "_grants_keeper.sql" %}

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

{{ routines }}
