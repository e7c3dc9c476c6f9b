{#- Bounded counters (`counter_bound`): a floor and a ceiling the counter's
    total never passes. Each slot row holds its share of them, `lowest`
    and `highest`, which add up to the floor and the ceiling, and stays
    within its share: so the total stays within the bounds however the
    slots are written, as long as every write keeps its slot within its
    share and every change of the shares keeps their sums. A write its
    slot can take alone changes that slot, under its one lock, as an
    increment does; any other (the slot short of room, or a write that
    adds room enough to share) locks every slot of the counter, checks the
    bound on the whole total, and spreads the new total evenly over the
    slots, each with an even share of the room left toward each bound. -#}
{%- import "_macros.sql" as m -%}
{%- import "_pending.sql" as pending -%}

{#- The two columns of a slot's shares, in CREATE TABLE (`add` false) or
    in ALTER TABLE (`add` true), with `quote` around their comments. -#}
{% macro columns(quote, add) -%}
{%- if add %}
    ADD COLUMN `lowest` BIGINT NULL COMMENT {{ quote }}a bounded counter: the least this slot may hold, its share of the floor (NULL: no floor){{ quote }},
    ADD COLUMN `highest` BIGINT NULL COMMENT {{ quote }}a bounded counter: the most this slot may hold, its share of the ceiling (NULL: no ceiling){{ quote }}
{%- else %}
    `lowest` BIGINT NULL COMMENT {{ quote }}a bounded counter: the least this slot may hold, its share of the floor (NULL: no floor){{ quote }},
    `highest` BIGINT NULL COMMENT {{ quote }}a bounded counter: the most this slot may hold, its share of the ceiling (NULL: no ceiling){{ quote }},
{%- endif %}
{%- endmacro %}

{#- Whether a slot row takes `delta` alone: it stays within the slot bound
    and within its shares. With `spread_from` (an SQL expression; empty for
    none), a write that moves the slot away from a bound by at least that
    much (one unit of room per slot: a restock) does not, so that it is
    spread for the writes that land on the other slots. Written as the
    delta against the room, so that no sum leaves BIGINT: a delta the slot
    cannot take goes the slow way, which refuses it for the counter's bound
    (9004) or the slot's (9003), never the server's overflow (1690). -#}
{% macro fits(p, delta, spread_from) -%}
{% call within_slot_bound(p, delta) %}{% endcall %}
{%- if p.has.bounds %}
{{- " " }}AND
{%- if spread_from.is_empty() %} (`lowest` IS NULL OR {{ delta }} >= `lowest` - `counter`) AND (`highest` IS NULL OR {{ delta }} <= `highest` - `counter`)
{%- else %} (`lowest` IS NULL OR {{ delta }} BETWEEN `lowest` - `counter` AND {{ spread_from }} - 1)
{{- " " }}AND (`highest` IS NULL OR {{ delta }} BETWEEN 1 - {{ spread_from }} AND `highest` - `counter`)
{%- endif %}
{%- endif %}
{%- endmacro %}

{#- Whether a slot row takes `delta` within the slot bound, written as the
    delta against the room (see fits). -#}
{% macro within_slot_bound(p, delta) -%}
{{ delta }} BETWEEN -{{ p.slots.bound }} - `counter` AND {{ p.slots.bound }} - `counter`
{%- endmacro %}

{#- What lock_all reads into, and spread computes with. -#}
{% macro declare(indent) -%}
{{ indent }}-- Read under lock; v_value is checked before it is stored.
{{ indent }}DECLARE v_bounded_slots INT;
{{ indent }}DECLARE v_bounded_total BIGINT;
{{ indent }}DECLARE v_floor BIGINT;
{{ indent }}DECLARE v_ceiling BIGINT;
{{ indent }}DECLARE v_value DECIMAL(20, 0);
{%- endmacro %}

{#- Locks every slot of counter p_name (FOR UPDATE: the latest committed
    rows, whatever the isolation level) and reads how many there are, their
    total, and the counter's floor and ceiling (NULL: none). -#}
{% macro lock_all(indent, p) -%}
{{ indent }}SELECT COUNT(*), CAST(COALESCE(SUM(`counter`), 0) AS SIGNED),
{{ indent }}       CAST(SUM(`lowest`) AS SIGNED), CAST(SUM(`highest`) AS SIGNED)
{{ indent }}  INTO v_bounded_slots, v_bounded_total, v_floor, v_ceiling
{{ indent }}  FROM `{{ p.names.table }}` FORCE INDEX (PRIMARY) WHERE `counter_name` = p_name FOR UPDATE;
{%- endmacro %}

{#- Whether lock_all found the counter bounded. -#}
{% macro is_bounded() -%}
(v_floor IS NOT NULL OR v_ceiling IS NOT NULL)
{%- endmacro %}

{#- Refuses v_value, the total a write would leave, past the floor or the
    ceiling lock_all read: errno 9004, with the room left toward it. -#}
{% macro check(indent, p) -%}
{{ indent }}IF v_value < v_floor THEN
{% call m::refuse(indent ~ "    ", p, p.errors.past_bound) %}'{{ refusals::WOULD_PASS_THE }} {{ refusals::FLOOR }} ', v_floor, ' ({{ refusals::ROOM_LEFT }}: ', v_bounded_total - v_floor, '){{ refusals::FOR_COUNTER }}: ', QUOTE(p_name){% endcall %}
{{ indent }}END IF;
{{ indent }}IF v_value > v_ceiling THEN
{% call m::refuse(indent ~ "    ", p, p.errors.past_bound) %}'{{ refusals::WOULD_PASS_THE }} {{ refusals::CEILING }} ', v_ceiling, ' ({{ refusals::ROOM_LEFT }}: ', v_ceiling - v_bounded_total, '){{ refusals::FOR_COUNTER }}: ', QUOTE(p_name){% endcall %}
{{ indent }}END IF;
{%- endmacro %}

{#- Writes v_value over the `slots` slots of counter p_name, with their
    shares of `floor` and `ceiling` (see the spread routine). -#}
{% macro spread(indent, p, slots, floor, ceiling) -%}
{{ indent }}CALL `{{ p.routine(Routine::Spread) }}`(p_name, {{ slots }}, v_value, {{ floor }}, {{ ceiling }});
{%- endmacro %}

{#- Adds `delta` to counter p_name through all of its slots: the slow way
    of a write its slot could not take alone. Every slot locked; none: an
    unknown counter. Unbounded, the slot picked is gone (a shrink removed
    it): slot 1, there as long as the counter is, takes the delta, and
    `slot` (a variable, or empty) names it. Bounded: refused past a bound,
    else the new total spread over the slots. -#}
{% macro add(indent, p, delta, slot) -%}
{%- if !p.has.bounds -%}
{% call add_to_first_slot(indent, p, delta) %}{% endcall %}
{%- if !slot.is_empty() %}
{{ indent }}SET {{ slot }} = 1;
{%- endif %}
{%- else -%}
{{ indent }}BEGIN
{% call declare(indent ~ "    ") %}{% endcall %}
{% call lock_all(indent ~ "    ", p) %}{% endcall %}
{{ indent }}    IF v_bounded_slots = 0 THEN
{% call m::unknown_counter(indent ~ "        ", p) %}{% endcall %}
{{ indent }}    END IF;
{{ indent }}    IF {% call is_bounded() %}{% endcall %} THEN
{{ indent }}        SET v_value = CAST(v_bounded_total AS DECIMAL(20, 0)) + {{ delta }};
{% call check(indent ~ "        ", p) %}{% endcall %}
{% call spread(indent ~ "        ", p, p.slots.spread, "v_floor", "v_ceiling") %}{% endcall %}
{{ indent }}    ELSE
{% call add_to_first_slot(indent ~ "        ", p, delta) %}{% endcall %}
{%- if !slot.is_empty() %}
{{ indent }}        SET {{ slot }} = 1;
{%- endif %}
{{ indent }}    END IF;
{{ indent }}END;
{%- endif %}
{%- endmacro %}

{#- Adds `delta` to slot 1 of counter p_name (locked, with every other, by
    lock_all), or refuses it (9003) when it would take the slot past the
    slot bound: checked first, so that no sum leaves BIGINT (1690). A lazy
    counter's slot 1 is created when it was never hit. -#}
{% macro add_to_first_slot(indent, p, delta) -%}
{{ indent }}BEGIN
{{ indent }}    DECLARE v_first BIGINT;
{{ indent }}    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_first = NULL;
{{ indent }}    SELECT `counter` INTO v_first FROM `{{ p.names.table }}` WHERE `counter_name` = p_name AND `counter_id` = 1 FOR UPDATE;
{{ indent }}    IF NOT COALESCE({{ delta }} BETWEEN -{{ p.slots.bound }} - v_first AND {{ p.slots.bound }} - v_first, {{ delta }} BETWEEN -{{ p.slots.bound }} AND {{ p.slots.bound }}) THEN
{% call m::refuse(indent ~ "        ", p, p.errors.invalid_argument) %}'{{ refusals::past_bound(*p.slots.bound) }}{{ refusals::FOR_COUNTER }}: ', QUOTE(p_name){% endcall %}
{{ indent }}    END IF;
{%- if p.has.auto_create %}
{{ indent }}    INSERT INTO `{{ p.names.table }}` (`counter_name`, `counter_id`, `description`, `start_date`, `counter`)
{{ indent }}    VALUES (p_name, 1, NULL, NOW(), {{ delta }})
{{ indent }}    ON DUPLICATE KEY UPDATE `counter` = `counter` + {{ delta }};
{%- else %}
{{ indent }}    UPDATE `{{ p.names.table }}` SET `counter` = `counter` + {{ delta }}
{{ indent }}     WHERE `counter_name` = p_name AND `counter_id` = 1;
{%- endif %}
{{ indent }}END;
{%- endmacro %}

{#- Sets counter p_name of lock_all's bounds to `value` (refused past a
    bound), spread over its slots, and its start date to now when
    `reset_start_date`. -#}
{% macro reset(indent, p, value, reset_start_date) -%}
{{ indent }}SET v_value = {{ value }};
{% call check(indent, p) %}{% endcall %}
{% call spread(indent, p, p.slots.spread, "v_floor", "v_ceiling") %}{% endcall %}
{{ indent }}IF {{ reset_start_date }} THEN
{{ indent }}    UPDATE `{{ p.names.table }}` FORCE INDEX (PRIMARY) SET `start_date` = NOW() WHERE `counter_name` = p_name;
{{ indent }}END IF;
{%- endmacro %}

{#- Makes spread `kind` of counter p_name with its arguments (SQL
    expressions, NULL where its kind takes none): `add` a delta the slot
    picked could not take alone, `reset` (a Classic package's) to a value,
    or `bound` to a floor and a ceiling. As one statement, which records
    the spread in the table of spreads, whose trigger makes it. In every
    package, the Galera one's included: a transaction of the routine's own,
    as the Galera changes are made (routines/_changes.sql), would put a
    COMMIT in every routine that writes, which a trigger may then not call
    (1422). -#}
{% macro make(indent, p, kind, delta, reset_start_date, lowest, highest) -%}
{{ indent }}INSERT INTO `{{ p.names.spreads_table }}`
{{ indent }}    (`counter_name`, `spread_kind`, `delta`, `reset_start_date`, `lowest`, `highest`, `spread_at`, `{{ p.names.pending_column }}`)
{{ indent }}VALUES (p_name, '{{ kind }}', {{ delta }}, {{ reset_start_date }}, {{ lowest }}, {{ highest }}, UTC_TIMESTAMP(6), TRUE)
{{ indent }}    {% call pending::row_alias() %}{% endcall %}
{{ indent }}ON DUPLICATE KEY UPDATE `spread_kind` = '{{ kind }}', `delta` = {{ delta }},
{{ indent }}    `reset_start_date` = {{ reset_start_date }}, `lowest` = {{ lowest }}, `highest` = {{ highest }},
{{ indent }}    `spread_at` = UTC_TIMESTAMP(6), {% call pending::update(p) %}{% endcall %};
{%- endmacro %}

{#- Makes spread `kind` (an SQL expression) of counter p_name, every slot
    locked first. -#}
{% macro apply(indent, p, kind, delta, reset_start_date, lowest, highest) -%}
{% call lock_all(indent, p) %}{% endcall %}
{{ indent }}IF v_bounded_slots = 0 THEN
{% call m::unknown_counter(indent ~ "    ", p) %}{% endcall %}
{{ indent }}END IF;
{{ indent }}CASE {{ kind }}
{{ indent }}WHEN 'add' THEN
{{ indent }}    IF {% call is_bounded() %}{% endcall %} THEN
{{ indent }}        SET v_value = CAST(v_bounded_total AS DECIMAL(20, 0)) + {{ delta }};
{% call check(indent ~ "        ", p) %}{% endcall %}
{% call spread(indent ~ "        ", p, p.slots.spread, "v_floor", "v_ceiling") %}{% endcall %}
{{ indent }}    ELSE
{{ indent }}        -- Unbounded: the slot is gone or past the slot bound;
{{ indent }}        -- slot 1, always there, takes the delta.
{% call add_to_first_slot(indent ~ "        ", p, delta) %}{% endcall %}
{{ indent }}    END IF;
{%- match p.reset_body %}
{%- when ResetBody::Classic %}
{{ indent }}WHEN 'reset' THEN
{{ indent }}    IF {% call is_bounded() %}{% endcall %} THEN
{% call reset(indent ~ "        ", p, delta, reset_start_date) %}{% endcall %}
{{ indent }}    ELSE
{{ indent }}        UPDATE `{{ p.names.table }}` FORCE INDEX (PRIMARY)
{{ indent }}           SET `counter` = IF(`counter_id` = 1, {{ delta }}, 0),
{{ indent }}               `start_date` = IF({{ reset_start_date }}, NOW(), `start_date`)
{{ indent }}         WHERE `counter_name` = p_name;
{{ indent }}    END IF;
{%- else %}
{%- endmatch %}
{{ indent }}WHEN 'bound' THEN
{{ indent }}    IF v_bounded_total < {{ lowest }} OR v_bounded_total > {{ highest }} THEN
{% call m::refuse(indent ~ "        ", p, p.errors.invalid_argument) %}'{{ refusals::TOTAL_OUTSIDE_BOUNDS }} (total ', v_bounded_total, ', floor ', COALESCE({{ lowest }}, 'NULL'), ', ceiling ', COALESCE({{ highest }}, 'NULL'), '){{ refusals::FOR_COUNTER }}: ', QUOTE(p_name){% endcall %}
{{ indent }}    END IF;
{{ indent }}    IF {{ lowest }} IS NULL AND {{ highest }} IS NULL THEN
{{ indent }}        UPDATE `{{ p.names.table }}` FORCE INDEX (PRIMARY) SET `lowest` = NULL, `highest` = NULL
{{ indent }}         WHERE `counter_name` = p_name;
{{ indent }}    ELSE
{{ indent }}        SET v_value = v_bounded_total;
{% call spread(indent ~ "        ", p, p.slots.spread, lowest, highest) %}{% endcall %}
{{ indent }}    END IF;
{{ indent }}END CASE;
{%- endmacro %}

{#- Sends a write of counter p_name to slot 1 unless a plain read of slot
    v_slot finds room there for four times its delta: the lock order of a
    bounded counter. Under REPEATABLE READ an UPDATE that reads a slot and
    changes nothing keeps its lock until the transaction ends, so a write
    that tried a slot short of room and then locked every slot held one
    slot while it waited for the others, and two such writes deadlocked:
    thousands of times per thousand writes near a bound, inside
    applications' transactions and in the trigger of a tracked write. So a
    write locks its own slot only when it looked and found room there, and
    any other starts at slot 1: those near a bound queue there, one at a
    time, and the one that needs every slot locks them in the order of
    their numbers from it. Four times the delta, so that a write whose
    slot's last room went to others between its look and its lock, the one
    left holding a slot out of that order, is rare: with the delta alone,
    3.5 deadlocks per 1,000 increments near a tracked counter's ceiling;
    with twice, 0 to 0.5 alone and 1.3 beside other tests' load. The look
    is skipped inside a caller's transaction under MariaDB's snapshot
    isolation, where a plain read would open a read view that fails the
    writes after it (1020; see snapshot_transaction), and on a counter the slot
    count's read found unbounded. A SELECT ... INTO of its own: a subquery
    in the IF's condition share-locked the slot (MariaDB 10.11). -#}
{% macro look_before_locking(indent, p) -%}
{{ indent }}IF {% if p.classic_flag %}v_bounded AND {% endif %}NOT ({% call m::snapshot_transaction() %}{% endcall %}) THEN
{{ indent }}    BEGIN
{{ indent }}        DECLARE v_fits BOOLEAN;
{{ indent }}        SELECT COALESCE(MAX({% call fits(p, "4 * CAST(v_delta AS DECIMAL(20, 0))", p.slots.count) %}{% endcall %}), FALSE) INTO v_fits
{{ indent }}          FROM `{{ p.names.table }}` WHERE `counter_name` = p_name AND `counter_id` = v_slot;
{{ indent }}        IF NOT v_fits THEN
{{ indent }}            SET v_slot = 1;
{{ indent }}        END IF;
{{ indent }}    END;
{{ indent }}END IF;
{%- endmacro %}

{#- Adds v_delta to slot v_slot of counter p_name, when the slot takes it
    alone (`fits`); else through all of the counter's slots (`add`). For
    lazy counters the slot row is created when it is not there yet. In a
    routine, a write of at least `spread_from` away from a bound is spread
    (see `fits`). In a trigger (`in_trigger`), the slot is locked and
    looked at first: ROW_COUNT() there would make the statement that fires
    the trigger unsafe for statement-based logging (1592). With
    `untracked`, that look also sets v_untracked to the slot's flag, read
    under its lock. -#}
{% macro add_to_slot(indent, p, in_trigger = false, defer = false, untracked = false) -%}
{%- if in_trigger %}
{{ indent }}BEGIN
{{ indent }}    DECLARE v_found INT;
{{ indent }}    DECLARE v_fits BOOLEAN;
{{ indent }}    SELECT COUNT(*), COALESCE(MAX({% call fits(p, "v_delta", "") %}{% endcall %}), FALSE){% if untracked %}, COALESCE(MAX(`untracked`), FALSE){% endif %} INTO v_found, v_fits{% if untracked %}, v_untracked{% endif %}
{{ indent }}      FROM `{{ p.names.table }}` WHERE `counter_name` = p_name AND `counter_id` = v_slot FOR UPDATE;
{%- if p.has.auto_create %}
{{ indent }}    IF v_found = 0 OR v_fits THEN
{{ indent }}        INSERT INTO `{{ p.names.table }}` (`counter_name`, `counter_id`, `description`, `start_date`, `counter`)
{{ indent }}        VALUES (p_name, v_slot, NULL, NOW(), v_delta)
{{ indent }}        ON DUPLICATE KEY UPDATE `counter` = `counter` + v_delta;
{%- else %}
{{ indent }}    IF v_found = 0 THEN
{{ indent }}        -- Slot gone (resized away): use slot 1, always there.
{{ indent }}        SET v_slot = 1;
{{ indent }}        SELECT COUNT(*), COALESCE(MAX({% call fits(p, "v_delta", "") %}{% endcall %}), FALSE){% if untracked %}, COALESCE(MAX(`untracked`), FALSE){% endif %} INTO v_found, v_fits{% if untracked %}, v_untracked{% endif %}
{{ indent }}          FROM `{{ p.names.table }}` WHERE `counter_name` = p_name AND `counter_id` = 1 FOR UPDATE;
{{ indent }}        IF v_found = 0 THEN
{% call m::unknown_counter(indent ~ "            ", p) %}{% endcall %}
{{ indent }}        END IF;
{{ indent }}    END IF;
{{ indent }}    IF v_fits THEN
{{ indent }}        UPDATE `{{ p.names.table }}` SET `counter` = `counter` + v_delta
{{ indent }}         WHERE `counter_name` = p_name AND `counter_id` = v_slot;
{%- endif %}
{{ indent }}    ELSE
{% call add(indent ~ "        ", p, "v_delta", "v_slot") %}{% endcall %}
{{ indent }}    END IF;
{{ indent }}END;
{%- else %}
{%- if p.has.auto_create %}
{{ indent }}INSERT INTO `{{ p.names.table }}` (`counter_name`, `counter_id`, `description`, `start_date`, `counter`)
{{ indent }}VALUES (p_name, v_slot, NULL, NOW(), v_delta)
{{ indent }}ON DUPLICATE KEY UPDATE `counter` = IF({% call fits(p, "v_delta", p.slots.count) %}{% endcall %},
{{ indent }}    `counter` + v_delta, `counter`);
{%- if p.has.bounds %}
{{ indent }}-- No row changed: the slot could not take the delta alone (short of room,
{{ indent }}-- or a restock to spread), so it is spread with every slot locked.
{{ indent }}IF ROW_COUNT() = 0 AND v_delta <> 0 THEN
{% call make(indent ~ "    ", p, "add", "v_delta", "NULL", "NULL", "NULL") %}{% endcall %}
{{ indent }}END IF;
{%- else %}
{{ indent }}-- No row changed: past the slot bound in this slot; slot 1 may take it.
{{ indent }}IF ROW_COUNT() = 0 AND v_delta <> 0 THEN
{% call add_to_first_slot(indent ~ "    ", p, "v_delta") %}{% endcall %}
{{ indent }}END IF;
{%- endif %}
{%- else %}
{{ indent }}UPDATE `{{ p.names.table }}` SET `counter` = `counter` + v_delta
{{ indent }} WHERE `counter_name` = p_name AND `counter_id` = v_slot
{%- if defer %}
{{ indent }}   AND p_name NOT LIKE '% '
{%- endif %}
{{ indent }}   AND {% call fits(p, "v_delta", p.slots.count) %}{% endcall %};
{%- if p.has.bounds || p.has.resize %}
{{ indent }}IF ROW_COUNT() = 0 THEN
{%- if defer %}
{% call m::deferred_name_check(p, indent ~ "    ") %}{% endcall %}
{%- endif %}
{{ indent }}    -- Slot gone (resized away) or short of room: try slot 1.
{{ indent }}    UPDATE `{{ p.names.table }}` SET `counter` = `counter` + v_delta
{{ indent }}     WHERE `counter_name` = p_name AND `counter_id` = 1
{{ indent }}       AND {% call fits(p, "v_delta", p.slots.count) %}{% endcall %};
{%- if p.has.bounds %}
{{ indent }}    -- Neither slot took it (short of room, or a restock to spread)
{{ indent }}    -- or no counter: the spread tells which; a 0 delta only looks.
{{ indent }}    IF ROW_COUNT() = 0 THEN
{{ indent }}        IF v_delta <> 0 THEN
{% call make(indent ~ "            ", p, "add", "v_delta", "NULL", "NULL", "NULL") %}{% endcall %}
{{ indent }}        ELSEIF NOT EXISTS (SELECT 1 FROM `{{ p.names.table }}` WHERE `counter_name` = p_name) THEN
{% call m::unknown_counter(indent ~ "            ", p) %}{% endcall %}
{{ indent }}        END IF;
{{ indent }}    END IF;
{%- else %}
{% call no_slot_took(indent ~ "    ", p) %}{% endcall %}
{%- endif %}
{{ indent }}END IF;
{%- else %}
{% call no_slot_took(indent, p, defer) %}{% endcall %}
{%- endif %}
{%- endif %}
{%- endif %}
{%- endmacro %}

{#- After an UPDATE of an unbounded counter's slot that changed no row: no
    such counter, a delta of 0, or a delta the slot cannot take within the
    slot bound, each told apart by a look of its own. -#}
{% macro no_slot_took(indent, p, defer = false) -%}
{{ indent }}IF ROW_COUNT() = 0 THEN
{%- if defer %}
{% call m::deferred_name_check(p, indent ~ "    ") %}{% endcall %}
{%- endif %}
{{ indent }}    IF NOT EXISTS (SELECT 1 FROM `{{ p.names.table }}` WHERE `counter_name` = p_name) THEN
{% call m::unknown_counter(indent ~ "        ", p) %}{% endcall %}
{{ indent }}    ELSEIF v_delta <> 0 THEN
{% call m::refuse(indent ~ "        ", p, p.errors.invalid_argument) %}'{{ refusals::past_bound(*p.slots.bound) }}{{ refusals::FOR_COUNTER }}: ', QUOTE(p_name){% endcall %}
{{ indent }}    END IF;
{{ indent }}END IF;
{%- endmacro %}
