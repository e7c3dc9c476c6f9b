{%- import "routines/_bounds.sql" as bounds -%}
{%- import "routines/_periods.sql" as periods -%}
{%- import "_macros.sql" as m -%}
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
-- A slot table made by a package without this one's features gains their
-- columns (in place, without copying the table):
{%- if p.bounds %}
-- bounds, the slots' shares of a bound;
{%- call when_missing(p.table, "lowest") %}{% call bounds::columns("''", true) %}{% endcall %}{% endcall %}
{%- endif %}
{%- if p.periods_feature %}
-- periods, `untracked`, set on every counter that tracks no period.
SET @slotted_counters_untracked = (
    SELECT COUNT(*) = 0 FROM information_schema.COLUMNS
     WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '{{ p.table }}' AND COLUMN_NAME = 'untracked');
{%- call when_missing(p.table, "untracked") %}{% call periods::untracked_column(p, "''", true) %}{% endcall %}{% endcall %}
UPDATE `{{ p.table }}` SET `untracked` = TRUE
 WHERE @slotted_counters_untracked AND {% call m::tracks_none(p, "`" ~ p.table ~ "`.`counter_name`") %}{% endcall %};
SET @slotted_counters_untracked = NULL;
{%- endif %}
SET @slotted_counters_alter = NULL;
