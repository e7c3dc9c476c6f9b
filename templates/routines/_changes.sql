{#- The changes that rewrite more than one slot, as the trigger on the
    table of changes makes them (see _changes_table.sql), or, in the Galera
    package on MariaDB in autocommit mode, the routine itself: each locks
    what it reads (FOR UPDATE), and reads no more than it locks. Inside a
    trigger no statement may hold a LIMIT or call ROW_COUNT(): either makes
    the statement that fires it unsafe for statement-based logging (1592).
    The change's arguments are SQL expressions (the columns of NEW, in the
    trigger); p_name is its counter, and `variables` declares what the
    changes use. -#}
{%- import "_macros.sql" as m -%}
{%- import "_pending.sql" as pending -%}
{%- import "routines/_bounds.sql" as bounds -%}

{#- Makes change `kind` (grow, shrink, compact or reset) of counter p_name,
    with the arguments its kind takes (SQL expressions, NULL where it takes
    none): as one statement, which records the change in the table of
    changes, whose trigger makes it; or, in the Galera package on MariaDB
    in autocommit mode, in a transaction of the routine's own (see
    `make_in_own_transaction`). -#}
{% macro make(indent, p, kind, slots, into_slot, value, reset_start_date) -%}
{%- if p.cluster.changes_in_own_transaction -%}
{{ indent }}-- MariaDB, autocommit: a transaction of its own (see {{ p.routine(Routine::Reset) }});
{{ indent }}-- MySQL (no handler on a kill) or in a transaction: made by the trigger.
{{ indent }}IF /*M! @@autocommit AND NOT @@in_transaction OR */ FALSE THEN
{% call make_in_own_transaction(indent ~ "    ", p, kind, slots, into_slot, value, reset_start_date) %}{% endcall %}
{{ indent }}ELSE
{% call record(indent ~ "    ", p, kind, slots, into_slot, value, reset_start_date) %}{% endcall %}
{{ indent }}END IF;
{%- else -%}
{% call record(indent, p, kind, slots, into_slot, value, reset_start_date) %}{% endcall %}
{%- endif %}
{%- endmacro %}

{#- The change recorded in the table of changes, whose trigger makes it in
    this statement: an INSERT ... ON DUPLICATE KEY UPDATE with the values
    written twice (VALUES() warns on MySQL 8.0.20+, and MariaDB has no row
    alias). -#}
{% macro record(indent, p, kind, slots, into_slot, value, reset_start_date) -%}
{{ indent }}INSERT INTO `{{ p.names.changes_table }}`
{{ indent }}    (`counter_name`, `change_kind`, `slots`, `into_slot`, `value`, `reset_start_date`, `changed_at`, `{{ p.names.pending_column }}`)
{{ indent }}VALUES (p_name, '{{ kind }}', {{ slots }}, {{ into_slot }}, {{ value }}, {{ reset_start_date }}, UTC_TIMESTAMP(6), TRUE)
{{ indent }}    {% call pending::row_alias() %}{% endcall %}
{{ indent }}ON DUPLICATE KEY UPDATE `change_kind` = '{{ kind }}', `slots` = {{ slots }}, `into_slot` = {{ into_slot }},
{{ indent }}    `value` = {{ value }}, `reset_start_date` = {{ reset_start_date }}, `changed_at` = UTC_TIMESTAMP(6),
{{ indent }}    {% call pending::update(p) %}{% endcall %};
{%- endmacro %}

{#- The change made by the routine itself, in a transaction of its own: on
    Galera, a call whose change made by a trigger lost certification or
    was aborted for a remote write (1213) could leave the session failing
    every later CALL at once with 1213, until it sent a statement of
    another kind (MariaDB 10.11.19, galera-4 26.4.23: in each of 5 runs of
    3,000 resets under load; made here, in none of 3). MariaDB runs the
    routine's handler when a call is killed, so the transaction is not
    left open. The Galera package refuses lazy counters, so its reset is
    the certified one. -#}
{% macro make_in_own_transaction(indent, p, kind, slots, into_slot, value, reset_start_date) -%}
{{ indent }}BEGIN
{{ indent }}    -- The arguments, before the variables below shadow them.
{{ indent }}    DECLARE v_change_slots INT DEFAULT {{ slots }};
{{ indent }}    DECLARE v_change_into_slot INT DEFAULT {{ into_slot }};
{{ indent }}    DECLARE v_change_value BIGINT DEFAULT {{ value }};
{{ indent }}    DECLARE v_change_reset_start_date BOOLEAN DEFAULT {{ reset_start_date }};
{{ indent }}    BEGIN
{% call variables(indent ~ "        ", p) %}{% endcall %}
{{ indent }}        DECLARE EXIT HANDLER FOR SQLEXCEPTION
{{ indent }}        BEGIN
{{ indent }}            ROLLBACK;
{{ indent }}            RESIGNAL;
{{ indent }}        END;
{{ indent }}        START TRANSACTION;
{%- match kind %}
{%- when "grow" %}
{%- call grow(indent ~ "        ", p, "v_change_slots") %}{% endcall %}
{%- when "shrink" %}
{%- call shrink(indent ~ "        ", p, "v_change_slots", "v_change_into_slot") %}{% endcall %}
{%- when "compact" %}
{%- call compact(indent ~ "        ", p) %}{% endcall %}
{%- else %}
{%- call reset_certified(indent ~ "        ", p, "v_change_value", "v_change_reset_start_date") %}{% endcall %}
{%- endmatch %}
{{ indent }}        COMMIT;
{{ indent }}    END;
{{ indent }}END;
{%- endmacro %}

{#- The variables the changes use. -#}
{% macro variables(indent, p) -%}
{{ indent }}DECLARE v_slots INT;
{{ indent }}DECLARE v_total BIGINT;
{{ indent }}DECLARE v_description {{ p.types.description_variable_type }};
{{ indent }}DECLARE v_start_date DATETIME;
{%- if p.has.periods %}
{{ indent }}-- Whether every slot tracks no period: the new slots follow them.
{{ indent }}DECLARE v_untracked BOOLEAN;
{%- endif %}
{%- if p.slots.fixed.is_none() %}
{{ indent }}DECLARE v_found INT;
{{ indent }}DECLARE v_bounded BOOLEAN;
{{ indent }}DECLARE v_above INT;
{{ indent }}DECLARE v_moved BIGINT;
{%- endif %}
{{ indent }}DECLARE v_message {{ p.types.message_type }};
{% call bounds::declare(indent) %}{% endcall %}
{%- endmacro %}

{#- Every slot locked, then the slots up to `slots` added after them; a
    bounded counter's total and shares spread again over all of them. -#}
{% macro grow(indent, p, slots) %}
{{ indent }}SELECT COUNT(*), MAX(`description`), MIN(`start_date`){% if p.has.periods %}, MIN(`untracked`){% endif %}
{{ indent }}  INTO v_slots, v_description, v_start_date{% if p.has.periods %}, v_untracked{% endif %}
{{ indent }}  FROM `{{ p.names.table }}` FORCE INDEX (PRIMARY) WHERE `counter_name` = p_name FOR UPDATE;
{{ indent }}IF v_slots = 0 THEN
{% call m::unknown_counter(indent ~ "    ", p) %}{% endcall %}
{{ indent }}END IF;
{% call m::slot_rows(indent, p, "v_slots + slot.id", "v_description, v_start_date, 0", slots ~ " - v_slots", "v_untracked") %}{% endcall %}
{%- call respread(indent, p) %}{% endcall %}
{%- endmacro %}

{#- A bounded counter's total spread again over its slots, with its bounds
    (read with every slot locked: the new slots have no share yet, so the
    shares still add up to the bounds). -#}
{% macro respread(indent, p) %}
{%- if p.has.bounds %}
{% call bounds::lock_all(indent, p) %}{% endcall %}
{{ indent }}IF {% call bounds::is_bounded() %}{% endcall %} THEN
{{ indent }}    SET v_value = v_bounded_total;
{% call bounds::spread(indent ~ "    ", p, p.slots.spread, "v_floor", "v_ceiling") %}{% endcall %}
{{ indent }}END IF;
{%- endif %}
{%- endmacro %}

{#- Slot `slots` moved into slot `into_slot`, as the comment says; a
    bounded counter's total spread again over the slots left. -#}
{% macro shrink(indent, p, slots, into_slot) %}
{{ indent }}-- Locks the slot it removes, the gap above it (it must still be
{{ indent }}-- the last) and the slot taking its value: not every slot, which
{{ indent }}-- Group Replication's applier would roll back for each remote
{{ indent }}-- increment. A bounded counter locks every slot.
{%- if p.has.bounds %}
{{ indent }}SELECT COUNT(*), CAST(COALESCE(SUM(`counter`), 0) AS SIGNED),
{{ indent }}       COALESCE(MAX(`lowest` IS NOT NULL OR `highest` IS NOT NULL), FALSE)
{{ indent }}  INTO v_found, v_moved, v_bounded
{{ indent }}  FROM `{{ p.names.table }}` WHERE `counter_name` = p_name AND `counter_id` = {{ slots }} FOR UPDATE;
{%- else %}
{{ indent }}SELECT COUNT(*), CAST(COALESCE(SUM(`counter`), 0) AS SIGNED) INTO v_found, v_moved
{{ indent }}  FROM `{{ p.names.table }}` WHERE `counter_name` = p_name AND `counter_id` = {{ slots }} FOR UPDATE;
{%- endif %}
{{ indent }}SELECT COUNT(*) INTO v_above
{{ indent }}  FROM `{{ p.names.table }}` WHERE `counter_name` = p_name AND `counter_id` = {{ slots }} + 1 FOR UPDATE;
{%- if p.has.bounds %}
{{ indent }}IF v_found = 1 AND v_above = 0 AND v_bounded THEN
{% call bounds::lock_all(indent ~ "    ", p) %}{% endcall %}
{{ indent }}    DELETE FROM `{{ p.names.table }}` WHERE `counter_name` = p_name AND `counter_id` = {{ slots }};
{{ indent }}    SET v_value = v_bounded_total;
{% call bounds::spread(indent ~ "    ", p, slots ~ " - 1", "v_floor", "v_ceiling") %}{% endcall %}
{{ indent }}ELSEIF v_found = 1 AND v_above = 0 THEN
{%- else %}
{{ indent }}IF v_found = 1 AND v_above = 0 THEN
{%- endif %}
{{ indent }}    DELETE FROM `{{ p.names.table }}` WHERE `counter_name` = p_name AND `counter_id` = {{ slots }};
{{ indent }}    UPDATE `{{ p.names.table }}` SET `counter` = `counter` + v_moved
{{ indent }}     WHERE `counter_name` = p_name AND `counter_id` = {{ into_slot }};
{{ indent }}END IF;
{%- endmacro %}

{#- Every slot locked and summed, and the sum put into slot 1: lazy
    counters keep only the rows that were hit, so slot 1 may be missing,
    and the counter is written again as that one row; else the other slots
    become 0. -#}
{% macro compact_unbounded(indent, p) %}
{%- if p.has.auto_create %}
{{ indent }}SELECT COUNT(*), CAST(SUM(`counter`) AS SIGNED), MAX(`description`), MIN(`start_date`)
{{ indent }}  INTO v_slots, v_total, v_description, v_start_date
{{ indent }}  FROM `{{ p.names.table }}` FORCE INDEX (PRIMARY) WHERE `counter_name` = p_name FOR UPDATE;
{%- else %}
{{ indent }}SELECT COUNT(*), CAST(SUM(`counter`) AS SIGNED) INTO v_slots, v_total
{{ indent }}  FROM `{{ p.names.table }}` FORCE INDEX (PRIMARY) WHERE `counter_name` = p_name FOR UPDATE;
{%- endif %}
{{ indent }}IF v_slots = 0 THEN
{% call m::unknown_counter(indent ~ "    ", p) %}{% endcall %}
{{ indent }}END IF;
{%- if p.has.auto_create %}
{{ indent }}DELETE `{{ p.names.table }}` FROM `{{ p.names.table }}` FORCE INDEX (PRIMARY) WHERE `counter_name` = p_name;
{{ indent }}INSERT INTO `{{ p.names.table }}` (`counter_name`, `counter_id`, `description`, `start_date`, `counter`)
{{ indent }}VALUES (p_name, 1, v_description, v_start_date, v_total);
{%- else %}
{{ indent }}UPDATE `{{ p.names.table }}` FORCE INDEX (PRIMARY) SET `counter` = IF(`counter_id` = 1, v_total, 0)
{{ indent }} WHERE `counter_name` = p_name;
{%- endif %}
{%- endmacro %}

{#- A lazy counter, which may lack slot 1, written again as one row of
    value `value`. -#}
{% macro reset_lazy_unbounded(indent, p, value, reset_start_date) %}
{{ indent }}SELECT COUNT(*), MAX(`description`), MIN(`start_date`) INTO v_slots, v_description, v_start_date
{{ indent }}  FROM `{{ p.names.table }}` FORCE INDEX (PRIMARY) WHERE `counter_name` = p_name FOR UPDATE;
{{ indent }}IF v_slots = 0 THEN
{% call m::unknown_counter(indent ~ "    ", p) %}{% endcall %}
{{ indent }}END IF;
{{ indent }}DELETE `{{ p.names.table }}` FROM `{{ p.names.table }}` FORCE INDEX (PRIMARY) WHERE `counter_name` = p_name;
{{ indent }}INSERT INTO `{{ p.names.table }}` (`counter_name`, `counter_id`, `description`, `start_date`, `counter`)
{{ indent }}VALUES (p_name, 1, v_description, IF({{ reset_start_date }}, NOW(), v_start_date), {{ value }});
{%- endmacro %}

{#- A cluster's reset: every slot changed twice, as the comment says. -#}
{% macro reset_certified_unbounded(indent, p, value, reset_start_date) %}
{{ indent }}SELECT COUNT(*) INTO v_slots
{{ indent }}  FROM `{{ p.names.table }}` FORCE INDEX (PRIMARY) WHERE `counter_name` = p_name FOR UPDATE;
{{ indent }}IF v_slots = 0 THEN
{% call m::unknown_counter(indent ~ "    ", p) %}{% endcall %}
{{ indent }}END IF;
{{ indent }}-- Every slot changes first (see {{ p.routine(Routine::Reset) }}).
{{ indent }}UPDATE `{{ p.names.table }}` FORCE INDEX (PRIMARY) SET `counter` = IF(`counter` = 0, 1, 0) WHERE `counter_name` = p_name;
{{ indent }}UPDATE `{{ p.names.table }}` FORCE INDEX (PRIMARY)
{{ indent }}   SET `counter` = IF(`counter_id` = 1, {{ value }}, 0),
{{ indent }}       `start_date` = IF({{ reset_start_date }}, NOW(), `start_date`)
{{ indent }} WHERE `counter_name` = p_name;
{%- endmacro %}

{#- What a compaction or a reset is to a bounded counter, with every slot
    locked: its value (the total, or the reset's) spread evenly over its
    slots, each with its share of the bounds; a reset past a bound is
    refused. Else `body`, the change of an unbounded counter. -#}
{% macro compact(indent, p) %}
{%- if !p.has.bounds %}
{%- call compact_unbounded(indent, p) %}{% endcall %}
{%- else %}
{% call bounds::lock_all(indent, p) %}{% endcall %}
{{ indent }}IF {% call bounds::is_bounded() %}{% endcall %} THEN
{{ indent }}    SET v_value = v_bounded_total;
{% call bounds::spread(indent ~ "    ", p, p.slots.spread, "v_floor", "v_ceiling") %}{% endcall %}
{{ indent }}ELSE
{%- call compact_unbounded(indent ~ "    ", p) %}{% endcall %}
{{ indent }}END IF;
{%- endif %}
{%- endmacro %}

{% macro reset_lazy(indent, p, value, reset_start_date) %}
{%- if !p.has.bounds %}
{%- call reset_lazy_unbounded(indent, p, value, reset_start_date) %}{% endcall %}
{%- else %}
{% call bounds::lock_all(indent, p) %}{% endcall %}
{{ indent }}IF {% call bounds::is_bounded() %}{% endcall %} THEN
{% call bounds::reset(indent ~ "    ", p, value, reset_start_date) %}{% endcall %}
{{ indent }}ELSE
{%- call reset_lazy_unbounded(indent ~ "    ", p, value, reset_start_date) %}{% endcall %}
{{ indent }}END IF;
{%- endif %}
{%- endmacro %}

{% macro reset_certified(indent, p, value, reset_start_date) %}
{%- if !p.has.bounds %}
{%- call reset_certified_unbounded(indent, p, value, reset_start_date) %}{% endcall %}
{%- else %}
{% call bounds::lock_all(indent, p) %}{% endcall %}
{{ indent }}IF {% call bounds::is_bounded() %}{% endcall %} THEN
{% call bounds::reset(indent ~ "    ", p, value, reset_start_date) %}{% endcall %}
{{ indent }}ELSE
{%- call reset_certified_unbounded(indent ~ "    ", p, value, reset_start_date) %}{% endcall %}
{{ indent }}END IF;
{%- endif %}
{%- endmacro %}
