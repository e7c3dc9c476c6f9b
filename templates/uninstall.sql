-- uninstall.sql: drops the slotted-counter package's routines, views and
-- triggers, after checking, as setup.sql does, that each is the package's.
{% include "_header.sql" %}

-- It keeps the tables (`slotted-counters uninstall --drop-data` drops them):
{%- for relation in p.install.relations %}{% if !relation.is_view %}
--   DROP TABLE `{{ relation.name }}`;
{%- endif %}{% endfor %}
-- It leaves grants on the views, and on MariaDB on the routines (MySQL
-- revokes those with the routine); `slotted-counters uninstall` revokes them:
{%- for relation in p.install.relations %}{% if relation.is_view %}
--   REVOKE ALL PRIVILEGES ON `{{ relation.name }}` FROM 'app'@'%';
{%- endif %}{% endfor %}
{%- if !p.install.documented_events.is_empty() %}
-- It leaves events that call the routines (which then fail), such as these:
{%- for event in p.install.documented_events %}
--   DROP EVENT IF EXISTS `{{ event }}`;
{%- endfor %}
{%- else %}
-- It leaves events that call the routines, which then fail each time they run.
{%- endif %}

{% let creates_routines = false %}
{% include "_probe.sql" %}
SET @slotted_counters_grants = NULL;
DROP PROCEDURE IF EXISTS `{{ p.install.grants_keeper }}`;

{% for routine in p.routines -%}
DROP {{ routine.kind }} IF EXISTS `{{ routine.name }}`;
{% endfor -%}
{% for relation in p.install.relations -%}{% if relation.is_view -%}
DROP VIEW IF EXISTS `{{ relation.name }}`;
{% endif -%}{% endfor -%}
{% for (trigger, _) in p.names.trigger_tables -%}
DROP TRIGGER IF EXISTS `{{ trigger }}`;
{% endfor -%}
