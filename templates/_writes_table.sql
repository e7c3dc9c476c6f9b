-- One row per write that carries an id ({{ p.add_once }}, {{ p.add_many_once }}),
-- committed in the write's own transaction: a write sent again with its id
-- after a lost answer finds the id here and changes nothing. Rows older than
-- the window go with {{ p.forget_writes }}.
CREATE TABLE IF NOT EXISTS `{{ p.writes_table }}` (
    `write_id` BINARY(16) NOT NULL COMMENT 'chosen at random by the writer',
    `written_at` DATETIME(6) NOT NULL COMMENT 'when the write recorded it',
    PRIMARY KEY (`write_id`),
    KEY `written_at` (`written_at`, `write_id`)
) ENGINE=InnoDB;
