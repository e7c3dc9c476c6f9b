{%- import "_macros.sql" as m -%}
{%- import "routines/_periods.sql" as periods -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::AddWithinLimit) }}` */$$
-- Adds p_delta, written to slot p_slot of counter p_name, to its bucket of
-- p_period that starts at p_bucket, a period the counter limits
-- ({{ p.routine(Routine::Limit) }}) to p_limit, under the quota's lock: refused ({{ p.past_bound }}) when it
-- would take the bucket past the limit, which undoes the whole write. The
-- triggers that apply writes call it, in the write's statement; nothing
-- else does. They pass the limit they read just before, in the write's
-- statement (NULL when it went meanwhile), and where the period's buckets
-- start (p_offset, minutes east of UTC) for the refusal's reset. A write
-- racing {{ p.routine(Routine::Limit) }} is checked against the old limit or the new one.
--
-- The limit is held in shares, one per row of the bucket (`highest`), as a
-- bounded total is. A write whose routine saw room for four times its
-- delta in its rows adds to them in its trigger,
-- under the locks its slot's writers take anyway, and never comes here.
-- Any other (a row short of room, sent to slot 1 where such writes queue;
-- a row not made yet, as at the start of a bucket; a refund; a late
-- write; a batch or a write with an id, which see nothing before their
-- trigger) locks the bucket's end, the quota's lock, then every row of the
-- bucket, checks the limit against their sum, and shares the room left
-- evenly among the rows again, its own included. So no write holds its
-- row, or the gap where a missing one would go, while it waits for the
-- quota's lock held by one that waits for that row or gap. The look is the
-- routine's: a read in a trigger, and so here, share-locks what it reads
-- where the binary log is written by statement (MariaDB's default, MIXED).
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::AddWithinLimit) }}`(
    IN p_name {{ p.name_type }},
    IN p_period {{ p.period_type }},
    IN p_bucket DATETIME,
    IN p_slot INT,
    IN p_delta BIGINT,
    IN p_limit BIGINT,
    IN p_offset SMALLINT
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_message {{ p.message_type }};
    DECLARE v_used DECIMAL(40, 0);
    DECLARE v_rows INT;
    DECLARE v_own INT;
    DECLARE v_room DECIMAL(40, 0);

    IF p_name IS NULL OR p_period IS NULL OR p_bucket IS NULL OR p_slot IS NULL OR p_delta IS NULL THEN
{% call m::refuse_text("        ", p, p.invalid_argument) %}{{ refusals::NULL_LIMITED_WRITE }}{% endcall %}
    END IF;
    -- The quota's lock: the bucket's end, a row of no slot that counts 0.
    -- The locks of the read of every row stop there: without it they would
    -- hold the next row of the index, or the gap to it, another bucket's
    -- or counter's, and two checks of two buckets that then add a row would
    -- deadlock. Not the period's row, which a batch's trigger share-locks
    -- as it reads what the period keeps: two such writes that then both
    -- lock it for writing would deadlock.
    INSERT INTO `{{ p.buckets_table }}` (`counter_name`, `period`, `bucket_start`, `counter_id`, `counter`)
    VALUES (p_name, p_period, p_bucket, {{ p.bucket_end }}, 0)
    ON DUPLICATE KEY UPDATE `counter` = `counter`;
    SELECT COALESCE(SUM(`counter`), 0), COUNT(*), COALESCE(SUM(`counter_id` = p_slot), 0)
      INTO v_used, v_rows, v_own
      FROM `{{ p.buckets_table }}`
     WHERE `counter_name` = p_name AND `period` = p_period AND `bucket_start` = p_bucket
       AND `counter_id` < {{ p.bucket_end }}
       FOR UPDATE;
    IF p_delta > 0 AND v_used + p_delta > p_limit THEN
{% call m::refuse("        ", p, p.past_bound) %}'{{ refusals::WOULD_PASS_THE }} ', p_period, ' {{ refusals::LIMIT }} ', p_limit, ' ({{ refusals::ROOM_LEFT }}: ', GREATEST(p_limit - v_used, 0), ', {{ refusals::RESETS }} ', {% call periods::bucket_end(p, "p_period", "p_bucket", "p_offset") %}{% endcall %}, '){{ refusals::FOR_COUNTER }}: ', QUOTE(p_name){% endcall %}
    END IF;
    INSERT INTO `{{ p.buckets_table }}` (`counter_name`, `period`, `bucket_start`, `counter_id`, `counter`)
    VALUES (p_name, p_period, p_bucket, p_slot, p_delta)
    ON DUPLICATE KEY UPDATE `counter` = `counter` + p_delta;
    -- The room left, shared again: NULL when the limit went meanwhile.
    SET v_rows = v_rows + 1 - v_own, v_room = GREATEST(p_limit - v_used - p_delta, 0);
    UPDATE `{{ p.buckets_table }}`
       SET `highest` = `counter` + v_room DIV v_rows + IF(`counter_id` = p_slot, v_room MOD v_rows, 0)
     WHERE `counter_name` = p_name AND `period` = p_period AND `bucket_start` = p_bucket
       AND `counter_id` < {{ p.bucket_end }};
END$$
