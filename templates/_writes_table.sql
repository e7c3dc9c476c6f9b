{%- import "_pending.sql" as pending -%}
-- One row per write that carries an id ({{ p.routine(Routine::AddOnce) }}, {{ p.routine(Routine::AddManyOnce) }},
-- or the client's plain mode), committed in the write's own transaction: a
-- write sent again with its id after a lost answer finds the id here and
-- changes nothing. Keyed by the counter first, so that a sharding engine
-- keeps a write's id beside the counter's slots; a routine batch records its
-- id under the empty name. Rows older than the window go with
-- {{ p.routine(Routine::ForgetWrites) }}.
CREATE TABLE IF NOT EXISTS `{{ p.writes_table }}` (
    `counter_name` VARCHAR({{ p.name_length }}) NOT NULL COMMENT 'the counter written; empty for a routine batch',
    `write_id` BINARY(16) NOT NULL COMMENT 'chosen at random by the writer',
    `written_at` DATETIME(6) NOT NULL COMMENT 'UTC: when the write recorded it',{%- call pending::column(p) %}{% endcall %}
    PRIMARY KEY (`counter_name`, `write_id`),
    KEY `written_at` (`written_at`),{%- call pending::check(p, p.writes_table) %}{% endcall %}
) ENGINE=InnoDB DEFAULT CHARSET={{ p.charset }} COLLATE={{ p.collation }};
