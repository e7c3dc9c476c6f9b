-- uninstall.sql: drops the routines, the view and the triggers of the
-- slotted-counter package.
-- The `{{ p.table }}` table and its counts are kept; DROP TABLE `{{ p.table }}`
-- removes them too.
{% include "_header.sql" %}

{% for routine in p.routines -%}
DROP {{ routine.kind }} IF EXISTS `{{ routine.name }}`;
{% endfor -%}
DROP VIEW IF EXISTS `{{ p.totals_view }}`;
DROP TRIGGER IF EXISTS `{{ p.insert_trigger }}`;
DROP TRIGGER IF EXISTS `{{ p.update_trigger }}`;
DROP TRIGGER IF EXISTS `{{ p.apply_trigger }}`;
DROP TRIGGER IF EXISTS `{{ p.change_trigger }}`;
DROP TRIGGER IF EXISTS `{{ p.tracked_write_trigger }}`;
DROP TRIGGER IF EXISTS `{{ p.spread_trigger }}`;
