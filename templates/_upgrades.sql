{%- import "routines/_bounds.sql" as bounds -%}
{%- import "_pending.sql" as pending -%}
{%- import "routines/_periods.sql" as periods -%}
{%- import "_macros.sql" as m -%}
{#- Runs `alter` (text for a quoted string) on `table` when it lacks
    `column`: MySQL has no ADD COLUMN IF NOT EXISTS. -#}
{%- macro when_missing(table, column) %}
SET @slotted_counters_upgrade = (
    SELECT IF(COUNT(*) = 0, 'ALTER TABLE `{{ table }}`{{ caller() }}', 'DO 0')
      FROM information_schema.COLUMNS
     WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '{{ table }}' AND COLUMN_NAME = '{{ column }}');
PREPARE slotted_counters_upgrade FROM @slotted_counters_upgrade;
EXECUTE slotted_counters_upgrade;
DEALLOCATE PREPARE slotted_counters_upgrade;
{%- endmacro %}
-- Tables made by earlier versions gain what this one adds, last: a slot
-- table made before bounded counters its two columns (both servers add them
-- in place, without copying the table), and a table whose rows a trigger
-- applies its guard, a column and a CHECK (a copy of the table on MySQL;
-- these tables hold one row per counter or slot, and the write ids of the
-- last few minutes).
{%- if p.bounds %}
{%- call when_missing(p.table, "lowest") %}{% call bounds::columns("''", true) %}{% endcall %}{% endcall %}
{%- endif %}
{%- if p.periods_feature %}
-- A slot table made before `untracked` marks, once, the slots of each counter
-- that tracks no period then, for its writes to skip the look at periods.
SET @slotted_counters_untracked = (
    SELECT COUNT(*) = 0 FROM information_schema.COLUMNS
     WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '{{ p.table }}' AND COLUMN_NAME = 'untracked');
{%- call when_missing(p.table, "untracked") %}{% call periods::untracked_column(p, "''", true) %}{% endcall %}{% endcall %}
UPDATE `{{ p.table }}` SET `untracked` = TRUE
 WHERE @slotted_counters_untracked AND {% call m::tracks_none(p, "`" ~ p.table ~ "`.`counter_name`") %}{% endcall %};
SET @slotted_counters_untracked = NULL;
-- Tables made before limits per period ({{ p.routine(Routine::Limit) }}) gain their columns.
{%- call when_missing(p.periods_table, "highest") %}{% call periods::limit_column("''", true) %}{% endcall %}{% endcall %}
{%- call when_missing(p.buckets_table, "highest") %}{% call periods::share_column("''", true) %}{% endcall %}{% endcall %}
{%- call when_missing(p.tracked_writes_table, "highest_" ~ p.periods[0].name()) %}{% for period in p.periods %}{% call periods::limit_of_write_column(period, "''", true) %}{% endcall %},{% endfor %}{% call periods::room_seen_column("''", true) %}{% endcall %}{% endcall %}
-- and before periods that start at an offset from UTC ({{ p.routine(Routine::TrackAtOffset) }}).
{%- call when_missing(p.periods_table, "utc_offset") %}{% call periods::offset_column("''", true) %}{% endcall %}{% endcall %}
{%- call when_missing(p.tracked_writes_table, "utc_offset_" ~ p.periods[0].name()) %}{% for period in p.periods %}{% call periods::offset_of_write_column(period, "''", true) %}{% endcall %}{% if !loop.last %},{% endif %}{% endfor %}{% endcall %}
{%- endif %}
{%- for table in p.applied_tables %}
{%- call when_missing(table, p.pending_column) %}{% call pending::add(p, table) %}{% endcall %}{% endcall %}
{%- endfor %}
SET @slotted_counters_upgrade = NULL;
