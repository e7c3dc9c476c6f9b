{%- import "_pending.sql" as pending -%}
-- The last change of each counter that rewrites more than one slot (a step
-- of a resize, a compaction, the reset of a lazy or cluster package): the
-- routine records the change here, and the trigger {{ p.change_trigger }}
-- makes it, so that the change is one statement: in autocommit mode it commits whole or not
-- at all, with no transaction of the routine's own, and a call the server
-- kills (MySQL runs no handler then) leaves nothing open on the connection.
-- A counter's row goes with {{ p.routine(Routine::Delete) }}.
CREATE TABLE IF NOT EXISTS `{{ p.changes_table }}` (
    `counter_name` VARCHAR({{ p.name_length }}) NOT NULL,
    `change_kind` ENUM('grow', 'shrink', 'compact', 'reset') NOT NULL,
    `slots` INT NULL COMMENT 'grow: the slot count it reaches; shrink: the last slot, which it removes',
    `into_slot` INT NULL COMMENT 'shrink: the slot that takes the removed slot''s value',
    `value` BIGINT NULL COMMENT 'reset: the value',
    `reset_start_date` BOOLEAN NULL COMMENT 'reset: whether the start date became the time of the reset',
    `changed_at` DATETIME(6) NOT NULL,{%- call pending::column(p) %}{% endcall %}
    PRIMARY KEY (`counter_name`),{%- call pending::check(p, p.changes_table) %}{% endcall %}
) ENGINE=InnoDB DEFAULT CHARSET={{ p.charset }} COLLATE={{ p.collation }};
