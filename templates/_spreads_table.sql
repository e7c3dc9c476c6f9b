{%- import "_pending.sql" as pending -%}
-- Each bounded counter's last spread (see {{ p.routine(Routine::Bound) }}): a write its slot
-- could not take alone, a reset or new bounds; made by {{ p.names.spread_trigger }}.
CREATE TABLE IF NOT EXISTS `{{ p.names.spreads_table }}` (
    `counter_name` VARCHAR({{ p.types.name_length }}) NOT NULL,
    `spread_kind` ENUM('add', 'reset', 'bound') NOT NULL,
    `delta` BIGINT NULL COMMENT 'add: the delta; reset: the value',
    `reset_start_date` BOOLEAN NULL COMMENT 'reset: whether the start date became the time of the reset',
    `lowest` BIGINT NULL COMMENT 'bound: the floor (NULL: none)',
    `highest` BIGINT NULL COMMENT 'bound: the ceiling (NULL: none)',
    `spread_at` DATETIME(6) NOT NULL,{%- call pending::column(p) %}{% endcall %}
    PRIMARY KEY (`counter_name`),{%- call pending::check(p, p.names.spreads_table) %}{% endcall %}
) ENGINE=InnoDB DEFAULT CHARSET={{ p.types.charset }} COLLATE={{ p.types.collation }};
