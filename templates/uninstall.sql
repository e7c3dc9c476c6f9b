-- uninstall.sql: drops the routines, the views and the triggers of the
-- slotted-counter package, after the same check as setup.sql's: nothing of
-- the package's names that is not the package's is dropped.
{% include "_header.sql" %}

-- What it keeps, with every count in it, and what removes it:
{%- for relation in p.relations %}{% if !relation.is_view %}
--   DROP TABLE `{{ relation.name }}`;
{%- endif %}{% endfor %}
-- (`slotted-counters uninstall --drop-data` drops them all.)
-- What it leaves that names the package's objects:
--   grants on the views and on the routines (MySQL revokes those on a
--   routine as it drops the routine; MariaDB keeps them):
{%- for relation in p.relations %}{% if relation.is_view %}
--     REVOKE ALL PRIVILEGES ON `{{ relation.name }}` FROM 'app'@'%';
{%- endif %}{% endfor %}
--   (`slotted-counters uninstall` revokes them itself);
{%- if !p.documented_events.is_empty() %}
--   events that call the routines, such as those the docs suggest, which
--   then fail each time they run:
{%- for event in p.documented_events %}
--     DROP EVENT IF EXISTS `{{ event }}`;
{%- endfor %}
{%- else %}
--   events that call the routines, which then fail each time they run.
{%- endif %}

{% let creates_routines = false %}
{% include "_probe.sql" %}
SET @slotted_counters_grants = NULL;
DROP PROCEDURE IF EXISTS `{{ p.grants_keeper }}`;

{% for routine in p.routines -%}
DROP {{ routine.kind }} IF EXISTS `{{ routine.name }}`;
{% endfor -%}
{% for relation in p.relations -%}{% if relation.is_view -%}
DROP VIEW IF EXISTS `{{ relation.name }}`;
{% endif -%}{% endfor -%}
{% for (trigger, _) in p.trigger_tables -%}
DROP TRIGGER IF EXISTS `{{ trigger }}`;
{% endfor -%}
