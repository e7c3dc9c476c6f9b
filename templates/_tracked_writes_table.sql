{%- import "_pending.sql" as pending -%}
-- The last write to each slot of a counter that tracks periods, rewritten
-- under the slot's own lock; the trigger {{ p.names.tracked_write_trigger }} adds
-- it to the slot and its buckets. Untracked counters' writes skip this table.
CREATE TABLE IF NOT EXISTS `{{ p.names.tracked_writes_table }}` (
    `counter_name` VARCHAR({{ p.types.name_length }}) NOT NULL,
    `counter_id` SMALLINT UNSIGNED NOT NULL COMMENT 'the slot picked',
    `delta` BIGINT NOT NULL,
    `counted_at` DATETIME(6) NOT NULL COMMENT 'UTC: the moment whose buckets it counts in',
{%- for period in p.periods.all %}
    `keep_{{ period.name() }}` INT UNSIGNED NULL COMMENT 'what the {{ period.name() }} keeps, as the write read it: NULL untracked, {{ p.periods.keep_all }} all',
    `highest_{{ period.name() }}` BIGINT NULL COMMENT 'the limit of the {{ period.name() }}, as the write read it: NULL none',
    `utc_offset_{{ period.name() }}` SMALLINT NULL COMMENT 'where buckets of the {{ period.name() }} start, in minutes east of UTC, as the write read it',
{%- endfor %}
    `room_seen` BOOLEAN NOT NULL DEFAULT FALSE COMMENT 'TRUE: the write saw room in its rows of each limited bucket',{%- call pending::column(p) %}{% endcall %}
    PRIMARY KEY (`counter_name`, `counter_id`),{%- call pending::check(p, p.names.tracked_writes_table) %}{% endcall %}
) ENGINE=InnoDB DEFAULT CHARSET={{ p.types.charset }} COLLATE={{ p.types.collation }};
