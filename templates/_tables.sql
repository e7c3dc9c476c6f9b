{#- The package's tables and views, in the order they are created: the
    slot table, then each feature's tables, then what reads them. Shared by
    create_tables.sql and setup.sql. -#}
{% include "_table.sql" %}

{% include "_totals_view.sql" %}

{%- if p.has.writes_table %}

{% include "_writes_table.sql" %}
{%- endif %}
{%- if p.has.changes_table %}

{% include "_changes_table.sql" %}
{%- endif %}
{%- if p.has.periods %}

{% include "_periods_tables.sql" %}

{% include "_tracked_writes_table.sql" %}
{%- endif %}
{%- if p.has.bounds %}

{% include "_spreads_table.sql" %}
{%- endif %}
{%- if p.has.bounds || p.has.periods %}

{% include "_feature_columns.sql" %}
{%- endif %}
{%- if p.has.periods %}

{% include "_rooms_view.sql" %}
{%- endif %}
