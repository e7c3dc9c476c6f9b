-- The periods each counter tracks ({{ p.routine(Routine::Track) }}), a row per counter and
-- period: how many buckets to keep, and the most each may count ({{ p.routine(Routine::Limit) }}).
CREATE TABLE IF NOT EXISTS `{{ p.names.periods_table }}` (
    `counter_name` VARCHAR({{ p.types.name_length }}) NOT NULL,
    `period` {{ p.types.period_column_type }} NOT NULL,
    `keep` INT UNSIGNED NULL COMMENT 'buckets kept, the current one included; NULL: all',
    `utc_offset` SMALLINT NOT NULL DEFAULT 0 COMMENT 'minutes east of UTC where the buckets start: 480 for +08:00',
    `highest` BIGINT NULL COMMENT 'the most a bucket may count; NULL: no limit',
    PRIMARY KEY (`counter_name`, `period`)
) ENGINE=InnoDB DEFAULT CHARSET={{ p.types.charset }} COLLATE={{ p.types.collation }};

-- What each tracked period counted: a bucket per period start (UTC), the
-- sum of its rows, one per slot written. A write adds to its slot and to
-- that slot's bucket rows together, so a bucket is no hotter than the total
-- and a cluster node writes only its own slots' rows. A limited bucket holds
-- its limit in shares, one per row, and a row of no slot ({{ p.periods.bucket_end }}, counting
-- 0): the lock of a check of the limit.
CREATE TABLE IF NOT EXISTS `{{ p.names.buckets_table }}` (
    `counter_name` VARCHAR({{ p.types.name_length }}) NOT NULL,
    `period` {{ p.types.period_column_type }} NOT NULL,
    `bucket_start` DATETIME NOT NULL COMMENT 'UTC: the start of the minute, hour, day or month the bucket counts, at its period''s offset',
    `counter_id` SMALLINT UNSIGNED NOT NULL COMMENT 'the slot the writes went to, or {{ p.periods.bucket_end }} for a limited bucket''s end, which counts 0',
    `counter` BIGINT NOT NULL DEFAULT 0,
    `highest` BIGINT NULL COMMENT 'a limited period: the most this row may count, its share of the limit; NULL: none yet',
    PRIMARY KEY (`counter_name`, `period`, `bucket_start`, `counter_id`)
) ENGINE=InnoDB DEFAULT CHARSET={{ p.types.charset }} COLLATE={{ p.types.collation }};
