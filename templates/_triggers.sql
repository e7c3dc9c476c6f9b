{%- import "_macros.sql" as m -%}
{%- import "_pending.sql" as pending -%}
{%- import "routines/_bounds.sql" as bounds -%}
{%- import "routines/_changes.sql" as change -%}
{%- import "routines/_periods.sql" as periods -%}
{#- The triggers that apply writes each hold their own copy of the write to
    the slot and to the buckets (bounds::add_to_slot,
    periods::add_to_buckets), rather than CALL a procedure they share. Tried:
    with the slot's write in a procedure both triggers called, a re-install
    on one Galera node made writes on the others fail with 1146 for
    `counters`, the table only that procedure named, in each of 3 runs of
    the re-install scenario. The likely cause: a statement opens the tables
    of the routines its triggers call as it starts, and misses those of a
    routine the re-install replaces at that moment; a table the trigger
    names itself is always opened. So no routine a trigger calls names a
    table the trigger does not: the triggers read a quota's limit
    themselves and pass it to counter_add_within_limit, whose own read of
    `counter_periods` failed so (1146) for late writes with a quota; and
    each trigger that calls the spread routine locks the slots first, in a
    statement of its own. -#}
{%- if p.slot_bound_triggers -%}
-- A slot holds at most {{ p.slot_bound }} either way: the largest BIGINT over the
-- most slots a counter may have ({{ p.bound_slots }}), so that a counter's total always
-- fits the BIGINT that {{ p.routine(Routine::Get) }} returns. Triggers keep every write to the
-- table to it, whichever routine or statement makes it. An update may still
-- bring a slot beyond the bound back toward 0.
/*!80000 DROP TRIGGER IF EXISTS `{{ p.insert_trigger }}` */$$
CREATE /*M! OR REPLACE */ TRIGGER `{{ p.insert_trigger }}` BEFORE INSERT ON `{{ p.table }}`
FOR EACH ROW
BEGIN
    DECLARE v_message {{ p.message_type }};
    IF NEW.`counter` NOT BETWEEN -{{ p.slot_bound }} AND {{ p.slot_bound }} THEN
{% call m::slot_bound_error("        ", p) %}{% endcall %}
    END IF;
END$$

/*!80000 DROP TRIGGER IF EXISTS `{{ p.update_trigger }}` */$$
CREATE /*M! OR REPLACE */ TRIGGER `{{ p.update_trigger }}` BEFORE UPDATE ON `{{ p.table }}`
FOR EACH ROW
BEGIN
    DECLARE v_message {{ p.message_type }};
    IF (NEW.`counter` > {{ p.slot_bound }} AND NEW.`counter` > OLD.`counter`)
       OR (NEW.`counter` < -{{ p.slot_bound }} AND NEW.`counter` < OLD.`counter`) THEN
{% call m::slot_bound_error("        ", p) %}{% endcall %}
    END IF;
END$$
{%- endif %}
{%- if p.has_writes_table %}

-- Applies a write with an id ({{ p.routine(Routine::AddOnce) }}, {{ p.routine(Routine::AddManyOnce) }}, and
-- the batches, under an id of their own) in the statement that records its
-- id, so that the id and the write's deltas commit together or not at all
-- with no transaction opened around them. BEFORE INSERT, so that it marks
-- the row applied (see {{ p.writes_table }}); an id already recorded then
-- fails the statement (1062), which undoes what the trigger applied.
-- The routine passes the write's entries, `hex(name):slot:delta;` each, in
-- @slotted_counters_write_plan, for the id in @slotted_counters_write_id:
-- a row with any other id (as the plain mode records its own) applies
-- nothing. The deltas count in the buckets of @slotted_counters_write_at
-- (NULL: now) of the periods their counters track.
/*!80000 DROP TRIGGER IF EXISTS `{{ p.apply_trigger }}` */$$
CREATE /*M! OR REPLACE */ TRIGGER `{{ p.apply_trigger }}` BEFORE INSERT ON `{{ p.writes_table }}`
FOR EACH ROW
BEGIN
    DECLARE v_plan {{ p.statement_type }};
    DECLARE v_entry {{ p.statement_type }};
    -- The counter of the entry being applied; named like the routines'
    -- parameter, so the shared messages apply.
    DECLARE p_name {{ p.name_type }};
    DECLARE v_slot INT;
    DECLARE v_delta BIGINT;
{%- if p.periods_feature %}
    -- The moment whose buckets the deltas count in, and what each period
    -- of the entry's counter keeps.
    DECLARE v_at DATETIME(6);
{%- call periods::declare_keeps("    ", p, false) %}{% endcall %}
{%- endif %}
    DECLARE v_message {{ p.message_type }};
    IF NEW.`write_id` = @slotted_counters_write_id THEN
        SET v_plan = @slotted_counters_write_plan;
{%- if p.periods_feature %}
        SET v_at = COALESCE(@slotted_counters_write_at, UTC_TIMESTAMP(6));
{%- endif %}
        WHILE v_plan <> '' DO
{% call m::next_plan_entry("            ", p) %}{% endcall %}
{%- call bounds::add_to_slot("            ", p, true) %}{% endcall %}
{%- if p.periods_feature %}
{% call periods::read_keeps("            ", p, true) %}{% endcall %}
{% call periods::add_to_buckets("            ", p, "v_delta", "v_at", "v_keep_", "v_highest_", "v_offset_", "") %}{% endcall %}
{%- endif %}
        END WHILE;
{% call pending::clear("        ", p) %}{% endcall %}
    END IF;
END$$
{%- endif %}
{%- if p.has_changes_table %}


-- Makes the change a routine records in {{ p.changes_table }} (a resize step, a
-- compaction{% match p.reset_body %}{% when ResetBody::Classic %}{% else %}, a reset{% endmatch %}) in the statement that records it, so that
-- the change commits whole or not at all with no transaction opened around
-- it. BEFORE INSERT: an INSERT ... ON DUPLICATE KEY UPDATE fires it whether
-- the counter had a row there or not.
/*!80000 DROP TRIGGER IF EXISTS `{{ p.change_trigger }}` */$$
CREATE /*M! OR REPLACE */ TRIGGER `{{ p.change_trigger }}` BEFORE INSERT ON `{{ p.changes_table }}`
FOR EACH ROW
BEGIN
    -- The counter changed; named like the routines' parameter, so the
    -- shared messages apply.
    DECLARE p_name {{ p.name_type }};
{% call change::variables("    ", p) %}{% endcall %}
    SET p_name = NEW.`counter_name`;
    CASE NEW.`change_kind`
{%- if p.resize %}
{%- if p.fixed_slots.is_none() %}
    WHEN 'grow' THEN
{%- call change::grow("        ", p, "NEW.`slots`") %}{% endcall %}
    WHEN 'shrink' THEN
{%- call change::shrink("        ", p, "NEW.`slots`", "NEW.`into_slot`") %}{% endcall %}
{%- endif %}
    WHEN 'compact' THEN
{%- call change::compact("        ", p) %}{% endcall %}
{%- endif %}
{%- match p.reset_body %}
{%- when ResetBody::Lazy %}
    WHEN 'reset' THEN
{%- call change::reset_lazy("        ", p, "NEW.`value`", "NEW.`reset_start_date`") %}{% endcall %}
{%- when ResetBody::Certified %}
    WHEN 'reset' THEN
{%- call change::reset_certified("        ", p, "NEW.`value`", "NEW.`reset_start_date`") %}{% endcall %}
{%- else %}
{%- endmatch %}
    END CASE;
{% call pending::clear("    ", p) %}{% endcall %}
END$$
{%- endif %}
{%- if p.periods_feature %}
-- Applies a write of a counter that tracks periods (see {{ p.routine(Routine::Track) }}) in the
-- statement that records it: its delta to the slot, as {{ p.routine(Routine::Add) }} does,
-- and to the bucket that holds its moment of each period the write found
-- tracked, as the routine read it (the trigger does not read it again).
-- BEFORE INSERT: an INSERT ... ON DUPLICATE KEY UPDATE fires it whether the
-- slot had a row there or not.
/*!80000 DROP TRIGGER IF EXISTS `{{ p.tracked_write_trigger }}` */$$
CREATE /*M! OR REPLACE */ TRIGGER `{{ p.tracked_write_trigger }}` BEFORE INSERT ON `{{ p.tracked_writes_table }}`
FOR EACH ROW
BEGIN
    -- The write; named like the routines' variables, so the shared parts apply.
    DECLARE p_name {{ p.name_type }};
    DECLARE v_slot INT;
    DECLARE v_delta BIGINT;
    DECLARE v_message {{ p.message_type }};
    SET p_name = NEW.`counter_name`, v_slot = NEW.`counter_id`, v_delta = NEW.`delta`;
{%- call bounds::add_to_slot("    ", p, true) %}{% endcall %}
{% call periods::add_to_buckets("    ", p, "v_delta", "NEW.`counted_at`", "NEW.keep_", "NEW.highest_", "NEW.utc_offset_", "NEW.`room_seen`") %}{% endcall %}
{% call pending::clear("    ", p) %}{% endcall %}
END$$
{%- endif %}
{%- if p.bounds %}

-- Makes the spread a routine records in {{ p.spreads_table }} (see
-- {{ p.routine(Routine::Bound) }}) in the statement that records it: every slot of the
-- counter locked, the bound checked on the whole total, and the new total
-- written over the slots with their shares of the bounds. BEFORE INSERT: an
-- INSERT ... ON DUPLICATE KEY UPDATE fires it whether the counter had a row
-- there or not.
/*!80000 DROP TRIGGER IF EXISTS `{{ p.spread_trigger }}` */$$
CREATE /*M! OR REPLACE */ TRIGGER `{{ p.spread_trigger }}` BEFORE INSERT ON `{{ p.spreads_table }}`
FOR EACH ROW
BEGIN
    -- The counter spread; named like the routines' parameter, so the
    -- shared messages apply.
    DECLARE p_name {{ p.name_type }};
    DECLARE v_message {{ p.message_type }};
{%- call bounds::declare("    ") %}{% endcall %}
    SET p_name = NEW.`counter_name`;
{% call bounds::apply("    ", p, "NEW.`spread_kind`", "NEW.`delta`", "NEW.`reset_start_date`", "NEW.`lowest`", "NEW.`highest`") %}{% endcall %}
{% call pending::clear("    ", p) %}{% endcall %}
END$$
{%- endif %}
