-- uninstall.sql: drops the routines of the slotted-counter package.
-- The `{{ p.table }}` table and its counts are kept; DROP TABLE `{{ p.table }}`
-- removes them too.
{% include "_header.sql" %}

{% for routine in p.routines -%}
DROP {{ routine.kind }} IF EXISTS `{{ routine.name }}`;
{% endfor %}
