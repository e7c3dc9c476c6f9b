{%- import "routines/_bounds.sql" as bounds -%}
{%- import "routines/_periods.sql" as periods -%}
{#- Runs `ALTER TABLE table` with the caller's text (quoted for a string)
    when `table` lacks `column`: MySQL has no ADD COLUMN IF NOT EXISTS. -#}
{%- macro when_missing(table, column) %}
SET @slotted_counters_alter = (
    SELECT IF(COUNT(*) = 0, 'ALTER TABLE `{{ table }}`{{ caller() }}', 'DO 0')
      FROM information_schema.COLUMNS
     WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '{{ table }}' AND COLUMN_NAME = '{{ column }}');
PREPARE slotted_counters_alter FROM @slotted_counters_alter;
EXECUTE slotted_counters_alter;
DEALLOCATE PREPARE slotted_counters_alter;
{%- endmacro %}
-- A slot table made without these features gains their columns, in place.
{%- if p.has.bounds %}
{%- call when_missing(p.names.table, "lowest") %}{% call bounds::columns("''", true) %}{% endcall %}{% endcall %}
{%- endif %}
{%- if p.has.periods %}
-- `untracked` comes in DEFAULT TRUE, marking every counter with no row write;
-- then DEFAULT FALSE, and FALSE for counters an older periods table lists.
SET @slotted_counters_untracked = (
    SELECT COUNT(*) = 0 FROM information_schema.COLUMNS
     WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '{{ p.names.table }}' AND COLUMN_NAME = 'untracked');
{%- call when_missing(p.names.table, "untracked") %}{% call periods::untracked_column(p, "''", true, true) %}{% endcall %}{% endcall %}
SET @slotted_counters_alter = IF(@slotted_counters_untracked,
    'ALTER TABLE `{{ p.names.table }}` ALTER COLUMN `untracked` SET DEFAULT FALSE', 'DO 0');
PREPARE slotted_counters_alter FROM @slotted_counters_alter;
EXECUTE slotted_counters_alter;
DEALLOCATE PREPARE slotted_counters_alter;
UPDATE `{{ p.names.table }}` SET `untracked` = FALSE
 WHERE @slotted_counters_untracked AND `counter_name` IN (SELECT `counter_name` FROM `{{ p.names.periods_table }}`);
SET @slotted_counters_untracked = NULL;
{%- endif %}
SET @slotted_counters_alter = NULL;
