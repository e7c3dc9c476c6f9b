{%- import "_macros.sql" as m -%}
{%- import "routines/_periods.sql" as periods -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::AddWithinLimit) }}` */$$
-- Adds p_delta, written to slot p_slot of counter p_name, to its bucket of
-- p_period at p_bucket, limited to p_limit: {{ p.errors.past_bound }} past it, undoing the whole
-- write. Only the write triggers call it, in the write's statement, with the
-- limit they just read (NULL: removed; a race with {{ p.routine(Routine::Limit) }} sees the
-- old limit or the new) and p_offset, for the reset time the refusal names.
-- A write its row's share can take (its routine saw room for four times the
-- delta) adds there in its trigger and never comes here. Any other (a row
-- short of room, sent to slot 1; no row yet; a refund; a late, batched or
-- id write) takes the quota's lock, then every row of the bucket, checks
-- their sum and shares the room left evenly again: no write holds its row
-- or gap while it waits for the quota's lock. The write's routine looks at
-- the room before its statement: a read in a trigger, or here, share-locks
-- under statement-based binary logging (MariaDB's default, MIXED).
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::AddWithinLimit) }}`(
    IN p_name {{ p.types.name_type }},
    IN p_period {{ p.types.period_type }},
    IN p_bucket DATETIME,
    IN p_slot INT,
    IN p_delta BIGINT,
    IN p_limit BIGINT,
    IN p_offset SMALLINT
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_message {{ p.types.message_type }};
    DECLARE v_used DECIMAL(40, 0);
    DECLARE v_rows INT;
    DECLARE v_own INT;
    DECLARE v_room DECIMAL(40, 0);

    IF p_name IS NULL OR p_period IS NULL OR p_bucket IS NULL OR p_slot IS NULL OR p_delta IS NULL THEN
{% call m::refuse_text("        ", p, p.errors.invalid_argument) %}{{ refusals::NULL_LIMITED_WRITE }}{% endcall %}
    END IF;
    -- The quota's lock, the bucket's end row, where the read below stops:
    -- not at the next index row or gap, on which two checks that then add a
    -- row would deadlock. Not the period's row: a batch's trigger
    -- share-locks it, and two writes upgrading that lock would deadlock.
    INSERT INTO `{{ p.names.buckets_table }}` (`counter_name`, `period`, `bucket_start`, `counter_id`, `counter`)
    VALUES (p_name, p_period, p_bucket, {{ p.periods.bucket_end }}, 0)
    ON DUPLICATE KEY UPDATE `counter` = `counter`;
    SELECT COALESCE(SUM(`counter`), 0), COUNT(*), COALESCE(SUM(`counter_id` = p_slot), 0)
      INTO v_used, v_rows, v_own
      FROM `{{ p.names.buckets_table }}`
     WHERE `counter_name` = p_name AND `period` = p_period AND `bucket_start` = p_bucket
       AND `counter_id` < {{ p.periods.bucket_end }}
       FOR UPDATE;
    IF p_delta > 0 AND v_used + p_delta > p_limit THEN
{% call m::refuse("        ", p, p.errors.past_bound) %}'{{ refusals::WOULD_PASS_THE }} ', p_period, ' {{ refusals::LIMIT }} ', p_limit, ' ({{ refusals::ROOM_LEFT }}: ', GREATEST(p_limit - v_used, 0), ', {{ refusals::RESETS }} ', {% call periods::bucket_end(p, "p_period", "p_bucket", "p_offset") %}{% endcall %}, '){{ refusals::FOR_COUNTER }}: ', QUOTE(p_name){% endcall %}
    END IF;
    INSERT INTO `{{ p.names.buckets_table }}` (`counter_name`, `period`, `bucket_start`, `counter_id`, `counter`)
    VALUES (p_name, p_period, p_bucket, p_slot, p_delta)
    ON DUPLICATE KEY UPDATE `counter` = `counter` + p_delta;
    -- The room left, shared again: NULL when the limit went meanwhile.
    SET v_rows = v_rows + 1 - v_own, v_room = GREATEST(p_limit - v_used - p_delta, 0);
    UPDATE `{{ p.names.buckets_table }}`
       SET `highest` = `counter` + v_room DIV v_rows + IF(`counter_id` = p_slot, v_room MOD v_rows, 0)
     WHERE `counter_name` = p_name AND `period` = p_period AND `bucket_start` = p_bucket
       AND `counter_id` < {{ p.periods.bucket_end }};
END$$
