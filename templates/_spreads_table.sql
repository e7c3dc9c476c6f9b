{%- import "_pending.sql" as pending -%}
-- The last spread of each bounded counter ({{ p.routine(Routine::Bound) }}): a write
-- that the slot it picked could not take alone, a reset, new bounds. The
-- routine records it here, and the trigger {{ p.spread_trigger }} locks every slot of
-- the counter, checks the bound and writes the new total over the slots,
-- each with its share of the bounds, so that the spread is one statement:
-- in autocommit mode it commits whole or not at all, with no transaction of
-- the routine's own. A counter's row goes with {{ p.routine(Routine::Delete) }}.
CREATE TABLE IF NOT EXISTS `{{ p.spreads_table }}` (
    `counter_name` VARCHAR({{ p.name_length }}) NOT NULL,
    `spread_kind` ENUM('add', 'reset', 'bound') NOT NULL,
    `delta` BIGINT NULL COMMENT 'add: the delta; reset: the value',
    `reset_start_date` BOOLEAN NULL COMMENT 'reset: whether the start date became the time of the reset',
    `lowest` BIGINT NULL COMMENT 'bound: the floor (NULL: none)',
    `highest` BIGINT NULL COMMENT 'bound: the ceiling (NULL: none)',
    `spread_at` DATETIME(6) NOT NULL,{%- call pending::column(p) %}{% endcall %}
    PRIMARY KEY (`counter_name`),{%- call pending::check(p, p.spreads_table) %}{% endcall %}
) ENGINE=InnoDB DEFAULT CHARSET={{ p.charset }} COLLATE={{ p.collation }};
