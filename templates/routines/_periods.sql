{#- What the routines of periods share: how a write of a counter that
    tracks periods counts in its buckets, the checks of a period and a
    time, a bucket's start, and dropping buckets a few rows at a time.

    A write of a counter that tracks no period is what it always was (one
    UPDATE). One of a counter that tracks some is recorded, in one
    statement whose trigger adds its delta to the slot and to the buckets
    of its moment: a single write in the tracked writes' table, a batch or
    a write with an id in the write ids' (record_write). No trigger of
    periods runs on the slots' table, so a write of an untracked counter
    pays for none of them (the slot bound's two run there, in a package
    with any feature). -#}
{%- import "_macros.sql" as m -%}
{%- import "_pending.sql" as pending -%}

{#- The slots' column that lets a write of a counter that tracks no period
    skip the look at its periods: TRUE only while the counter is known to
    track none. FALSE, the default of a row written by anything else (a
    lazy slot), only sends the write the slower way, which looks. In CREATE
    TABLE (`add` false) or ALTER TABLE (`add` true, with the default TRUE
    when `added_true`), with `quote` around its comment. -#}
{% macro untracked_column(p, quote, add, added_true = false) -%}
{% if add %} ADD COLUMN {% endif %}`untracked` BOOLEAN NOT NULL DEFAULT {% if added_true %}TRUE{% else %}FALSE{% endif %} COMMENT {{ quote }}TRUE: the counter tracks no period, and its writes skip {{ p.names.periods_table }}{{ quote }}{% if !add %},{% endif %}
{%- endmacro %}

{#- Declares what read_keeps reads into (what each period keeps, and its
    limit) and, for a write that looks at its limits, what look_at_limits
    finds. -#}
{% macro declare_keeps(indent, p, looks_at_limits) -%}
{%- for period in p.periods.all %}
{{ indent }}DECLARE v_keep_{{ period.name() }} BIGINT;
{{ indent }}DECLARE v_highest_{{ period.name() }} BIGINT;
{{ indent }}DECLARE v_offset_{{ period.name() }} SMALLINT;
{%- endfor %}
{%- if looks_at_limits %}
{{ indent }}DECLARE v_room_seen BOOLEAN DEFAULT FALSE;
{%- endif %}
{%- endmacro %}

{#- Reads what each period of counter p_name keeps into v_keep_<period>:
    NULL when it is not tracked, p.periods.keep_all when every bucket is kept; its
    limit per bucket into v_highest_<period>, NULL for none; and where its
    buckets start into v_offset_<period>.
    Plain, or share-locked (`locked`: in a trigger, which may name no
    system variable, so that a period track stops or starts waits for the
    write's transaction), or both as the slot count is read
    (read_slot_count: locked inside a caller's transaction under MariaDB's
    snapshot isolation, snapshot_transaction). A write that finds no period tracked
    counts in no bucket, even when track commits before the write does: it
    is a write made before the period was tracked. -#}
{% macro read_keeps(indent, p, locked) -%}
{%- if locked %}
{% call select_keeps(indent, p, " LOCK IN SHARE MODE") %}{% endcall %}
{%- else %}
{{ indent }}IF {% call m::snapshot_transaction() %}{% endcall %} THEN
{% call select_keeps(indent ~ "    ", p, " LOCK IN SHARE MODE") %}{% endcall %}
{{ indent }}ELSE
{% call select_keeps(indent ~ "    ", p, "") %}{% endcall %}
{{ indent }}END IF;
{%- endif %}
{%- endmacro %}

{% macro select_keeps(indent, p, locking) -%}
{{ indent }}SELECT {% for period in p.periods.all %}{% if !loop.first %},
{{ indent }}       {% endif %}MAX(IF(`period` = '{{ period.name() }}', COALESCE(`keep`, {{ p.periods.keep_all }}), NULL)),
{{ indent }}       MAX(IF(`period` = '{{ period.name() }}', `highest`, NULL)),
{{ indent }}       MAX(IF(`period` = '{{ period.name() }}', `utc_offset`, NULL)){% endfor %}
{{ indent }}  INTO {% for period in p.periods.all %}{% if !loop.first %}, {% endif %}v_keep_{{ period.name() }}, v_highest_{{ period.name() }}, v_offset_{{ period.name() }}{% endfor %}
{{ indent }}  FROM `{{ p.names.periods_table }}` WHERE `counter_name` = p_name{{ locking }};
{%- endmacro %}

{#- Looks, without a lock, at slot v_slot's row of the bucket that holds
    `at` of each period read_keeps found limited: the lock order of a quota
    (see counter_add_within_limit), as the bounds' look is a bounded
    total's. v_room_seen says whether each row is there with room for four
    times the write's delta: the write's trigger then adds to them in one
    locked read and one UPDATE. A write that found a row of its own short of
    room goes to slot 1, where writes near a limit queue; one that found
    its row missing keeps its slot, whose first write of the bucket gives
    the row its share (sent to slot 1 too, no other slot's row would ever
    be made, and every write of the counter queued there: 1,337 increments
    a second against 3,585 for the same counter unlimited). Skipped for a
    write that gives room back, for a counter with no limit, for a late
    write (one before the current minute, whose buckets may be beyond what
    their periods keep), and inside a caller's transaction under MariaDB's
    snapshot isolation, as the bounds' look is. -#}
{% macro look_at_limits(indent, p, at) -%}
{{ indent }}IF v_delta > 0 AND COALESCE({% for period in p.periods.all %}{% if !loop.first %}, {% endif %}v_highest_{{ period.name() }}{% endfor %}) IS NOT NULL
{%- if at != "UTC_TIMESTAMP(6)" %}
{{ indent }}   AND {{ at }} >= DATE_FORMAT(UTC_TIMESTAMP(6), '%Y-%m-%d %H:%i:00')
{%- endif %}
{{ indent }}   AND NOT ({% call m::snapshot_transaction() %}{% endcall %}) THEN
{{ indent }}    BEGIN
{{ indent }}        DECLARE v_found INT;
{{ indent }}        DECLARE v_fitting INT;
{{ indent }}        SELECT COUNT(*), COALESCE(SUM(`counter` + 4 * CAST(v_delta AS DECIMAL(20, 0)) <= `highest`), 0)
{{ indent }}          INTO v_found, v_fitting
{{ indent }}          FROM `{{ p.names.buckets_table }}`
{{ indent }}         WHERE {% call limited_rows(indent ~ "         ", p, at, "v_highest_", "v_offset_") %}{% endcall %};
{{ indent }}        SET v_room_seen = v_fitting = {% call limited_count(p, "v_highest_") %}{% endcall %};
{{ indent }}        IF v_fitting < v_found THEN
{{ indent }}            SET v_slot = 1;
{{ indent }}        END IF;
{{ indent }}    END;
{{ indent }}END IF;
{%- endmacro %}

{#- The rows of slot v_slot of counter p_name in the bucket that holds
    `at` of each period limited (`highest` followed by the period's name
    not NULL), whose buckets start at `offset` followed by the name, as a
    condition of a WHERE clause. -#}
{% macro limited_rows(indent, p, at, highest, offset) -%}
`counter_name` = p_name AND `counter_id` = v_slot
{{ indent }}  AND ({% for period in p.periods.all %}{% if !loop.first %}
{{ indent }}    OR {% endif %}(`period` = '{{ period.name() }}' AND {{ highest }}{{ period.name() }} IS NOT NULL
{{ indent }}        AND `bucket_start` = {% call start_of(period, at, offset ~ period.name()) %}{% endcall %}){% endfor %})
{%- endmacro %}

{#- How many periods are limited (`highest` followed by the period's name
    not NULL). -#}
{% macro limited_count(p, highest) -%}
{% for period in p.periods.all %}{% if !loop.first %} + {% endif %}({{ highest }}{{ period.name() }} IS NOT NULL){% endfor %}
{%- endmacro %}

{#- Whether read_keeps found a period tracked. -#}
{% macro tracks_any(p) -%}
COALESCE({% for period in p.periods.all %}{% if !loop.first %}, {% endif %}v_keep_{{ period.name() }}{% endfor %}) IS NOT NULL
{%- endmacro %}

{#- Records v_delta to slot v_slot of counter p_name, counted at `at` in
    the periods read_keeps found, with their limits, in the tracked writes'
    table, whose trigger applies it. -#}
{% macro record_tracked_write(indent, p, at) -%}
{{ indent }}INSERT INTO `{{ p.names.tracked_writes_table }}`
{{ indent }}    (`counter_name`, `counter_id`, `delta`, `counted_at`{% for period in p.periods.all %}, `keep_{{ period.name() }}`, `highest_{{ period.name() }}`, `utc_offset_{{ period.name() }}`{% endfor %}, `room_seen`, `{{ p.names.pending_column }}`)
{{ indent }}VALUES (p_name, v_slot, v_delta, {{ at }}{% for period in p.periods.all %}, v_keep_{{ period.name() }}, v_highest_{{ period.name() }}, v_offset_{{ period.name() }}{% endfor %}, v_room_seen, TRUE)
{{ indent }}    {% call pending::row_alias() %}{% endcall %}
{{ indent }}ON DUPLICATE KEY UPDATE `delta` = v_delta, `counted_at` = {{ at }}{% for period in p.periods.all %},
{{ indent }}    `keep_{{ period.name() }}` = v_keep_{{ period.name() }}, `highest_{{ period.name() }}` = v_highest_{{ period.name() }},
{{ indent }}    `utc_offset_{{ period.name() }}` = v_offset_{{ period.name() }}{% endfor %},
{{ indent }}    `room_seen` = v_room_seen, {% call pending::update(p) %}{% endcall %};
{%- endmacro %}

{#- The invalid-argument error of a period other than the four, compared
    as bytes: 'hour ' is no period. -#}
{% macro check_period(indent, p) -%}
{{ indent }}IF p_period IS NULL OR CAST(p_period AS BINARY) NOT IN ({% for period in p.periods.all %}{% if !loop.first %}, {% endif %}'{{ period.name() }}'{% endfor %}) THEN
{% call m::refuse(indent ~ "    ", p, p.errors.invalid_argument) %}'period must be {% for period in p.periods.all %}{% if loop.last %} or {% else if !loop.first %}, {% endif %}''{{ period.name() }}''{% endfor %}, not ', COALESCE(QUOTE(p_period), 'NULL'), '{{ refusals::FOR_COUNTER }}: ', QUOTE(p_name){% endcall %}
{{ indent }}END IF;
{%- endmacro %}

{#- Reads the UTC moment a time parameter's text writes into `into`, a
    DATETIME(6); NULL for NULL and for any other text. Time parameters are
    text: MySQL moves a time written with an offset ('... +00:00') into the
    session's time zone on its way into a DATETIME parameter, so a UTC time
    would count hours away from where it belongs (MariaDB refuses the
    offset), and a session whose sql_mode is not strict turns a bad time
    into 0000-00-00 with only a warning. So a moment is a date, perhaps
    with a time ('YYYY-MM-DD', 'YYYY-MM-DD hh:mm', 'YYYY-MM-DD hh:mm:ss' and
    up to 6 decimals), a real one (no month or day 0) between the years
    {{ p.periods.first_year }} and {{ p.periods.last_year }}, where a bucket's start and the next one's are always
    within what the servers compute with. -#}
{% macro read_moment(indent, p, param, into) -%}
{{ indent }}IF {{ param }} REGEXP '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])([ T]([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9]([.][0-9]{1,6})?)?)?$'
{{ indent }}   AND LEFT({{ param }}, 4) BETWEEN '{{ p.periods.first_year }}' AND '{{ p.periods.last_year }}'
{{ indent }}   AND SUBSTRING({{ param }}, 9, 2) <= DAYOFMONTH(LAST_DAY(CONCAT(LEFT({{ param }}, 7), '-01'))) THEN
{{ indent }}    SET {{ into }} = CAST({{ param }} AS DATETIME(6));
{{ indent }}ELSE
{{ indent }}    SET {{ into }} = NULL;
{{ indent }}END IF;
{%- endmacro %}

{#- The invalid-argument error of a time parameter that read_moment did not
    read (NULL included), naming `what` and counter p_name when
    `of_counter`. -#}
{% macro check_moment(indent, p, param, moment, what, of_counter) -%}
{{ indent }}IF {{ moment }} IS NULL THEN
{% call m::refuse(indent ~ "    ", p, p.errors.invalid_argument) %}'{{ what }} {{ refusals::MOMENT_FORM }} in the years {{ p.periods.first_year }} to {{ p.periods.last_year }}, not ', COALESCE(QUOTE(LEFT({{ param }}, 40)), 'NULL'){% if of_counter %}, '{{ refusals::FOR_COUNTER }}: ', QUOTE(p_name){% endif %}{% endcall %}
{{ indent }}END IF;
{%- endmacro %}

{#- Reads p_at into v_moment, and refuses a write's moment that is not one
    or is later than now (UTC), naming counter p_name when `of_counter`. -#}
{% macro check_at(indent, p, of_counter) -%}
{% call read_moment(indent, p, "p_at", "v_moment") %}{% endcall %}
{% call check_moment(indent, p, "p_at", "v_moment", "at", of_counter) %}{% endcall %}
{{ indent }}IF v_moment > UTC_TIMESTAMP(6) THEN
{% call m::refuse(indent ~ "    ", p, p.errors.invalid_argument) %}'{{ refusals::AT_IN_FUTURE }}, not ', v_moment{% if of_counter %}, '{{ refusals::FOR_COUNTER }}: ', QUOTE(p_name){% endif %}{% endcall %}
{{ indent }}END IF;
{%- endmacro %}

{#- The start of the bucket of `period` that holds time `at`, for buckets
    that start `offset` minutes east of UTC (SQL expressions), as a UTC
    DATETIME: the start of the bucket of the local time, less the offset. -#}
{% macro start_of(period, at, offset) -%}
CAST(DATE_FORMAT({{ at }} + INTERVAL {{ offset }} MINUTE, '{{ period.sql_start_format() }}') AS DATETIME) - INTERVAL {{ offset }} MINUTE
{%- endmacro %}

{#- The start of the bucket of period `period` (an SQL expression of a
    period's name) that holds time `at`, for buckets that start `offset`
    minutes east of UTC, as a UTC DATETIME. -#}
{% macro bucket_start(p, period, at, offset) -%}
CASE {{ period }}{% for period_name in p.periods.all %} WHEN '{{ period_name.name() }}' THEN {% call start_of(period_name, at, offset) %}{% endcall %}{% endfor %} END
{%- endmacro %}

{#- The end of the bucket of period `period` (an SQL expression of a
    period's name) that starts at `start`, for buckets that start `offset`
    minutes east of UTC, as a UTC DATETIME: a month at +08:00 that starts
    on 31 January at 16:00 ends on 28 February at 16:00. -#}
{% macro bucket_end(p, period, start, offset) -%}
CASE {{ period }}{% for period_name in p.periods.all %} WHEN '{{ period_name.name() }}' THEN {{ start }} + INTERVAL {{ offset }} MINUTE + INTERVAL 1 {{ period_name.sql_unit() }} - INTERVAL {{ offset }} MINUTE{% endfor %} END
{%- endmacro %}

{#- Adds `delta`, written to slot v_slot of counter p_name, to the bucket
    of each period it tracks that holds time `at`, unless the period keeps
    no bucket so old (the buckets between, counted, so that no keep takes a
    date out of the servers' range): in the statement of the write, and to the bucket rows
    of the same slot, whose lock the slot's writers hold already. What each
    period keeps is `keep` followed by the period's name (NULL: untracked;
    p.periods.keep_all: every bucket), as read_keeps reads it; its limit is
    `highest` followed by the name (NULL: none); where its buckets start,
    `offset` followed by the name (minutes east of UTC). A write whose routine saw
    room in its rows of the limited buckets (`room_seen`, look_at_limits)
    adds to them at once if they still have it, under their locks; any
    other is counted in each limited bucket by counter_add_within_limit,
    which takes the quota's lock and refuses the write past the limit.
    `room_seen` is empty for writes that never look (those with ids).
    The limit passed to counter_add_within_limit is the period's as the
    trigger read it: `highest` where it read it share-locked (read_keeps),
    else read just before the CALL, as the routine's read may be old. A
    write racing counter_limit is checked against the old limit or the new
    one (reference.md), as if it came first or after; so a period it read
    as unlimited counts without a limit set since. The trigger reads the
    limit itself, not the routine it calls: on Galera, a write whose
    trigger reached `counter_periods` only through that routine failed
    with 1146 for that table while a re-install on another node replaced
    the routine (see _triggers.sql). -#}
{% macro add_to_buckets(indent, p, delta, at, keep, highest, offset, room_seen) -%}
{{ indent }}BEGIN
{{ indent }}    DECLARE v_now DATETIME(6) DEFAULT UTC_TIMESTAMP(6);
{{ indent }}    DECLARE v_bucket DATETIME;
{%- if room_seen != "" %}
{{ indent }}    -- A limited period's limit and offset, read just before the CALL.
{{ indent }}    DECLARE v_limit BIGINT;
{{ indent }}    DECLARE v_limit_offset SMALLINT;
{%- endif %}
{{ indent }}    -- Resets leave buckets alone, so a bucket row has no slot bound:
{{ indent }}    -- one that would leave BIGINT refuses the write (9003, not 1690).
{%- if room_seen != "" %}
{{ indent }}    DECLARE v_room_taken BOOLEAN DEFAULT FALSE;
{%- endif %}
{{ indent }}    DECLARE EXIT HANDLER FOR 1690
{{ indent }}    BEGIN
{% call m::refuse(indent ~ "        ", p, p.errors.invalid_argument) %}'{{ refusals::BUCKET_FULL }}{{ refusals::FOR_COUNTER }}: ', QUOTE(p_name){% endcall %}
{{ indent }}    END;
{%- if room_seen != "" %}
{{ indent }}    -- A write that saw room in its limited rows adds there if it still can.
{{ indent }}    IF {{ room_seen }} THEN
{{ indent }}        SELECT COUNT(*) = {% call limited_count(p, highest) %}{% endcall %} INTO v_room_taken
{{ indent }}          FROM `{{ p.names.buckets_table }}`
{{ indent }}         WHERE {% call limited_rows(indent ~ "         ", p, at, highest, offset) %}{% endcall %}
{{ indent }}           AND `counter` + CAST({{ delta }} AS DECIMAL(20, 0)) <= `highest`
{{ indent }}           FOR UPDATE;
{{ indent }}        IF v_room_taken THEN
{{ indent }}            UPDATE `{{ p.names.buckets_table }}` SET `counter` = `counter` + {{ delta }}
{{ indent }}             WHERE {% call limited_rows(indent ~ "             ", p, at, highest, offset) %}{% endcall %};
{{ indent }}        END IF;
{{ indent }}    END IF;
{%- endif %}
{%- for period in p.periods.all %}
{{ indent }}    IF {{ keep }}{{ period.name() }} IS NOT NULL THEN
{{ indent }}        SET v_bucket = {% call start_of(period, at, offset ~ period.name()) %}{% endcall %};
{{ indent }}        IF {{ keep }}{{ period.name() }} = {{ p.periods.keep_all }}
{{ indent }}           OR TIMESTAMPDIFF({{ period.sql_unit() }}, v_bucket + INTERVAL {{ offset }}{{ period.name() }} MINUTE,
{{ indent }}                            DATE_FORMAT(v_now + INTERVAL {{ offset }}{{ period.name() }} MINUTE, '{{ period.sql_start_format() }}')) < {{ keep }}{{ period.name() }} THEN
{{ indent }}            IF {{ highest }}{{ period.name() }} IS NULL THEN
{{ indent }}                INSERT INTO `{{ p.names.buckets_table }}` (`counter_name`, `period`, `bucket_start`, `counter_id`, `counter`)
{{ indent }}                VALUES (p_name, '{{ period.name() }}', v_bucket, v_slot, {{ delta }})
{{ indent }}                ON DUPLICATE KEY UPDATE `counter` = `counter` + {{ delta }};
{%- if room_seen != "" %}
{{ indent }}            ELSEIF NOT v_room_taken THEN
{{ indent }}                SELECT MAX(`highest`), MAX(`utc_offset`) INTO v_limit, v_limit_offset FROM `{{ p.names.periods_table }}`
{{ indent }}                 WHERE `counter_name` = p_name AND `period` = '{{ period.name() }}';
{{ indent }}                CALL `{{ p.routine(Routine::AddWithinLimit) }}`(p_name, '{{ period.name() }}', v_bucket, v_slot, {{ delta }}, v_limit, v_limit_offset);
{%- else %}
{{ indent }}            ELSE
{{ indent }}                CALL `{{ p.routine(Routine::AddWithinLimit) }}`(p_name, '{{ period.name() }}', v_bucket, v_slot, {{ delta }}, {{ highest }}{{ period.name() }}, {{ offset }}{{ period.name() }});
{%- endif %}
{{ indent }}            END IF;
{{ indent }}        END IF;
{{ indent }}    END IF;
{%- endfor %}
{{ indent }}END;
{%- endmacro %}

{#- What drop_buckets needs declared. -#}
{% macro declare_drop(indent) -%}
{{ "" }}
{{ indent }}DECLARE v_dropped INT;
{{ indent }}DECLARE v_until DATETIME;
{{ indent }}DECLARE v_until_slot INT;
{%- endmacro %}

{#- Deletes counter `name`'s buckets of period `period` that start before
    `before`, at most p.periods.expire_batch rows per statement, oldest first, so
    that each statement's transaction stays short in autocommit mode. No
    DELETE ... LIMIT, which is unsafe for statement-based logging (1592):
    each statement deletes up to the last row of the oldest batch. -#}
{% macro drop_buckets(indent, p, name, period, before) -%}
{{ indent }}SET v_dropped = {{ p.periods.expire_batch }};
{{ indent }}WHILE v_dropped = {{ p.periods.expire_batch }} DO
{{ indent }}    SELECT COUNT(*) INTO v_dropped
{{ indent }}      FROM (SELECT 1 FROM `{{ p.names.buckets_table }}`
{{ indent }}             WHERE `counter_name` = {{ name }} AND `period` = {{ period }} AND `bucket_start` < {{ before }}
{{ indent }}             LIMIT {{ p.periods.expire_batch }}) AS oldest;
{{ indent }}    IF v_dropped > 0 THEN
{{ indent }}        SELECT `bucket_start`, `counter_id` INTO v_until, v_until_slot
{{ indent }}          FROM (SELECT `bucket_start`, `counter_id` FROM `{{ p.names.buckets_table }}`
{{ indent }}                 WHERE `counter_name` = {{ name }} AND `period` = {{ period }} AND `bucket_start` < {{ before }}
{{ indent }}                 ORDER BY `bucket_start`, `counter_id` LIMIT {{ p.periods.expire_batch }}) AS oldest
{{ indent }}         ORDER BY `bucket_start` DESC, `counter_id` DESC LIMIT 1;
{{ indent }}        DELETE FROM `{{ p.names.buckets_table }}`
{{ indent }}         WHERE `counter_name` = {{ name }} AND `period` = {{ period }}
{{ indent }}           AND (`bucket_start` < v_until OR (`bucket_start` = v_until AND `counter_id` <= v_until_slot));
{{ indent }}    END IF;
{{ indent }}END WHILE;
{%- endmacro %}

{#- A function's answer when counter p_name does not exist or does not
    track p_period, or when one of `times` is NULL: NULL. Reads where the
    period's buckets start into v_offset, which the function declares:
    NULL for a period it does not track. -#}
{% macro null_unless_tracked(p, times) %}
    SET v_offset = (SELECT `utc_offset` FROM `{{ p.names.periods_table }}` WHERE `counter_name` = p_name AND `period` = p_period);
    IF p_name IS NULL OR v_offset IS NULL{% for time in times %} OR {{ time }} IS NULL{% endfor %}
       OR NOT EXISTS (SELECT 1 FROM `{{ p.names.table }}` WHERE `counter_name` = p_name) THEN
        RETURN NULL;
    END IF;
{%- endmacro %}

{#- Deletes every bucket of counter `name`, period by period, as
    drop_buckets does. -#}
{% macro drop_all_buckets(indent, p, name) -%}
{{ indent }}SET v_period_index = 1;
{{ indent }}WHILE v_period_index <= {{ p.periods.all.len() }} DO
{{ indent }}    SET v_period = ELT(v_period_index{% for period in p.periods.all %}, '{{ period.name() }}'{% endfor %});
{% call drop_buckets(indent ~ "    ", p, name, "v_period", "'9999-12-31'") %}{% endcall %}
{{ indent }}    SET v_period_index = v_period_index + 1;
{{ indent }}END WHILE;
{%- endmacro %}

{#- The rows of counter_room and the view of rooms: one per bound and limit,
    its kind, period (NULL for a bound of the total), bound, value (the
    total, or what the current bucket counted), room (how far a write may
    still move the value toward the bound) and resets_at (the UTC moment the
    current bucket ends, as a refusal writes it; NULL for a bound), and
    `place`, their order within a counter. `name` is the expression of the
    one counter read, or empty for every counter, each row then led by its
    counter_name; `indent` is where the rows' SELECTs start. The slots are
    read once for both bounds. A bound's period and reset are a bare NULL,
    which takes the limits' types: a CAST would take the connection's
    collation, which a package in another collation than the tables'
    default cannot mix with the period's. #}
{% macro room_rows(p, name, indent) -%}
{%- let every = name.is_empty() -%}
{%- if p.has.bounds %}
{{ indent }}SELECT {% if every %}`bounds`.`counter_name`, {% endif %}`kinds`.`kind`, NULL AS `period`,
{{ indent }}       IF(`kinds`.`place` = 1, `floor`, `ceiling`) AS `bound`, `total` AS `value`,
{{ indent }}       CAST(IF(`kinds`.`place` = 1, `total` - `floor`, `ceiling` - `total`) AS SIGNED) AS `room`,
{{ indent }}       NULL AS `resets_at`, `kinds`.`place`
{{ indent }}  FROM (SELECT {% if every %}`counter_name`, {% endif %}CAST(SUM(`counter`) AS SIGNED) AS `total`,
{{ indent }}               CAST(IF(COUNT(`lowest`) = COUNT(*), SUM(`lowest`), NULL) AS SIGNED) AS `floor`,
{{ indent }}               CAST(IF(COUNT(`highest`) = COUNT(*), SUM(`highest`), NULL) AS SIGNED) AS `ceiling`
{{ indent }}          FROM `{{ p.names.table }}` {% if every %}GROUP BY `counter_name`{% else %}WHERE `counter_name` = {{ name }}{% endif %}) AS `bounds`
{{ indent }}  JOIN (SELECT 'floor' AS `kind`, 1 AS `place` UNION ALL SELECT 'ceiling', 2) AS `kinds`
{{ indent }}    ON IF(`kinds`.`place` = 1, `floor`, `ceiling`) IS NOT NULL
{{ indent }}UNION ALL
{%- endif %}
{{ indent }}SELECT {% if every %}`limits`.`counter_name`, {% endif %}'limit' AS `kind`, `limits`.`period` AS `period`, `limits`.`highest` AS `bound`,
{{ indent }}       CAST(COALESCE(SUM(`b`.`counter`), 0) AS SIGNED) AS `value`,
{{ indent }}       CAST(GREATEST(`limits`.`highest` - COALESCE(SUM(`b`.`counter`), 0), 0) AS SIGNED) AS `room`,
{{ indent }}       DATE_FORMAT({% call bucket_end(p, "`limits`.`period`", "`limits`.`current`", "`limits`.`utc_offset`") %}{% endcall %}, '%Y-%m-%d %H:%i:%s') AS `resets_at`,
{{ indent }}       2 + `limits`.`period` AS `place`
{{ indent }}  FROM (SELECT `counter_name`, `period`, `highest`, `utc_offset`,
{{ indent }}               {% call bucket_start(p, "`period`", "UTC_TIMESTAMP()", "`utc_offset`") %}{% endcall %} AS `current`
{{ indent }}          FROM `{{ p.names.periods_table }}`
{{ indent }}         WHERE {% if !every %}`counter_name` = {{ name }} AND {% endif %}`highest` IS NOT NULL) AS `limits`
{{ indent }}  LEFT JOIN `{{ p.names.buckets_table }}` AS `b`
{{ indent }}    ON `b`.`counter_name` = `limits`.`counter_name` AND `b`.`period` = `limits`.`period`
{{ indent }}   AND `b`.`bucket_start` = `limits`.`current`
{{ indent }} GROUP BY `limits`.`counter_name`, `limits`.`period`, `limits`.`highest`, `limits`.`utc_offset`, `limits`.`current`
{%- endmacro %}
