-- The periods each counter tracks ({{ p.routine(Routine::Track) }}): one row per counter
-- and period, with how many of its buckets to keep and the most each may
-- count ({{ p.routine(Routine::Limit) }}).
CREATE TABLE IF NOT EXISTS `{{ p.periods_table }}` (
    `counter_name` VARCHAR({{ p.name_length }}) NOT NULL,
    `period` {{ p.period_column_type }} NOT NULL,
    `keep` INT UNSIGNED NULL COMMENT 'buckets kept, the current one included; NULL: all',
    `utc_offset` SMALLINT NOT NULL DEFAULT 0 COMMENT 'minutes east of UTC where the buckets start: 480 for +08:00',
    `highest` BIGINT NULL COMMENT 'the most a bucket may count; NULL: no limit',
    PRIMARY KEY (`counter_name`, `period`)
) ENGINE=InnoDB DEFAULT CHARSET={{ p.charset }} COLLATE={{ p.collation }};

-- What each tracked period counted: a bucket per period start (UTC), spread
-- over the slots the writes went to, as the total is, so that a counter's
-- current hour is no hotter than its total. A write adds its delta to its
-- slot and to the bucket rows of the same slot in one statement (the
-- routines through {{ p.tracked_writes_table }} or {{ p.writes_table }}; the plain mode in
-- the write's transaction), so a node of a cluster writes buckets of its
-- own slots only. A bucket's value is the sum of its rows; rows are
-- created by the first write to them. A bucket of a limited period holds
-- its limit in shares, one per row, as a bounded total does: a write its
-- row's share takes changes that row alone. Such a bucket also has a row
-- of no slot ({{ p.bucket_end }}), counting 0: the lock of a check of its limit
-- against the sum of its rows, and where the check's locks stop.
CREATE TABLE IF NOT EXISTS `{{ p.buckets_table }}` (
    `counter_name` VARCHAR({{ p.name_length }}) NOT NULL,
    `period` {{ p.period_column_type }} NOT NULL,
    `bucket_start` DATETIME NOT NULL COMMENT 'UTC: the start of the minute, hour, day or month the bucket counts, at its period''s offset',
    `counter_id` SMALLINT UNSIGNED NOT NULL COMMENT 'the slot the writes went to, or {{ p.bucket_end }} for a limited bucket''s end, which counts 0',
    `counter` BIGINT NOT NULL DEFAULT 0,
    `highest` BIGINT NULL COMMENT 'a limited period: the most this row may count, its share of the limit; NULL: none yet',
    PRIMARY KEY (`counter_name`, `period`, `bucket_start`, `counter_id`)
) ENGINE=InnoDB DEFAULT CHARSET={{ p.charset }} COLLATE={{ p.collation }};
