{%- import "_pending.sql" as pending -%}
-- One row per write with an id (a batch's under the empty name): a resent
-- write finds its id and changes nothing. Keyed by counter first for sharding
-- engines. Old ids go a few per write, or with {{ p.routine(Routine::ForgetWrites) }}.
CREATE TABLE IF NOT EXISTS `{{ p.names.writes_table }}` (
    `counter_name` VARCHAR({{ p.types.name_length }}) NOT NULL COMMENT 'the counter written; empty for a routine batch',
    `write_id` BINARY(16) NOT NULL COMMENT 'chosen at random by the writer',
    `written_at` DATETIME(6) NOT NULL COMMENT 'UTC: when the write recorded it',{%- call pending::column(p) %}{% endcall %}
    PRIMARY KEY (`counter_name`, `write_id`),
    KEY `written_at` (`written_at`),{%- call pending::check(p, p.names.writes_table) %}{% endcall %}
) ENGINE=InnoDB DEFAULT CHARSET={{ p.types.charset }} COLLATE={{ p.types.collation }};
