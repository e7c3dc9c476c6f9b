{%- import "_pending.sql" as pending -%}
-- Each counter's last change of more than one slot (a resize step, a
-- compaction, a lazy or cluster reset); made by {{ p.names.change_trigger }}.
CREATE TABLE IF NOT EXISTS `{{ p.names.changes_table }}` (
    `counter_name` VARCHAR({{ p.types.name_length }}) NOT NULL,
    `change_kind` ENUM('grow', 'shrink', 'compact', 'reset') NOT NULL,
    `slots` INT NULL COMMENT 'grow: the slot count it reaches; shrink: the last slot, which it removes',
    `into_slot` INT NULL COMMENT 'shrink: the slot that takes the removed slot''s value',
    `value` BIGINT NULL COMMENT 'reset: the value',
    `reset_start_date` BOOLEAN NULL COMMENT 'reset: whether the start date became the time of the reset',
    `changed_at` DATETIME(6) NOT NULL,{%- call pending::column(p) %}{% endcall %}
    PRIMARY KEY (`counter_name`),{%- call pending::check(p, p.names.changes_table) %}{% endcall %}
) ENGINE=InnoDB DEFAULT CHARSET={{ p.types.charset }} COLLATE={{ p.types.collation }};
