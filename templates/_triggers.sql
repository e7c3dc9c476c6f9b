{%- import "_macros.sql" as m -%}
{%- import "_pending.sql" as pending -%}
{%- import "routines/_bounds.sql" as bounds -%}
{%- import "routines/_changes.sql" as change -%}
{%- import "routines/_periods.sql" as periods -%}
{#- Each trigger holds its own copy of the slot's and the buckets' writes
    (bounds::add_to_slot, periods::add_to_buckets) rather than CALL a shared
    procedure: a routine a trigger calls names no table the trigger does
    not name itself (see the SQL comment below). So the triggers read a
    quota's limit themselves and pass it to counter_add_within_limit, and
    each trigger that calls the spread routine first locks the slots in a
    statement of its own. -#}
{%- if p.has.slot_bound_triggers -%}
-- A routine records each write or change that spans rows in a side table,
-- whose BEFORE INSERT trigger below applies it in that same statement: it
-- commits whole or not at all with no transaction opened by a routine, so a
-- call the server kills (MySQL runs no handler then) leaves nothing open.
-- The triggers fire for INSERT ... ON DUPLICATE KEY UPDATE too. A routine a
-- trigger calls names no table the trigger does not name itself: on Galera,
-- writes otherwise fail with 1146 while another node re-installs.
--
-- A slot holds at most {{ p.slots.bound }} either way (the largest BIGINT over
-- {{ p.slots.bound_slots }} slots), whatever writes it, so a counter's total fits the BIGINT
-- {{ p.routine(Routine::Get) }} returns. An update may bring a slot past it back toward 0.
/*!80000 DROP TRIGGER IF EXISTS `{{ p.names.insert_trigger }}` */$$
CREATE /*M! OR REPLACE */ TRIGGER `{{ p.names.insert_trigger }}` BEFORE INSERT ON `{{ p.names.table }}`
FOR EACH ROW
BEGIN
    DECLARE v_message {{ p.types.message_type }};
    IF NEW.`counter` NOT BETWEEN -{{ p.slots.bound }} AND {{ p.slots.bound }} THEN
{% call m::slot_bound_error("        ", p) %}{% endcall %}
    END IF;
END$$

/*!80000 DROP TRIGGER IF EXISTS `{{ p.names.update_trigger }}` */$$
CREATE /*M! OR REPLACE */ TRIGGER `{{ p.names.update_trigger }}` BEFORE UPDATE ON `{{ p.names.table }}`
FOR EACH ROW
BEGIN
    DECLARE v_message {{ p.types.message_type }};
    IF (NEW.`counter` > {{ p.slots.bound }} AND NEW.`counter` > OLD.`counter`)
       OR (NEW.`counter` < -{{ p.slots.bound }} AND NEW.`counter` < OLD.`counter`) THEN
{% call m::slot_bound_error("        ", p) %}{% endcall %}
    END IF;
END$$
{%- endif %}
{%- if p.has.writes_table %}

-- Applies a write with an id ({{ p.routine(Routine::AddOnce) }}, {{ p.routine(Routine::AddManyOnce) }}, the
-- batches) as its id is recorded: the entries of @slotted_counters_write_plan
-- (`hex(name):slot:delta;` each) for the id in @slotted_counters_write_id{% if p.has.periods %},
-- counted in the buckets of @slotted_counters_write_at (NULL: now){% endif %}. A
-- recorded id fails the INSERT (1062), undoing all; another id applies nothing.
/*!80000 DROP TRIGGER IF EXISTS `{{ p.names.apply_trigger }}` */$$
CREATE /*M! OR REPLACE */ TRIGGER `{{ p.names.apply_trigger }}` BEFORE INSERT ON `{{ p.names.writes_table }}`
FOR EACH ROW
BEGIN
    DECLARE v_plan {{ p.types.statement_type }};
    DECLARE v_entry {{ p.types.statement_type }};
    DECLARE p_name {{ p.types.name_type }};
    DECLARE v_slot INT;
    DECLARE v_delta BIGINT;
{%- if p.has.periods %}
    DECLARE v_at DATETIME(6);
{%- call periods::declare_keeps("    ", p, false) %}{% endcall %}
    DECLARE v_untracked BOOLEAN;
{%- endif %}
    DECLARE v_message {{ p.types.message_type }};
    IF NEW.`write_id` = @slotted_counters_write_id THEN
        SET v_plan = @slotted_counters_write_plan;
{%- if p.has.periods %}
        SET v_at = COALESCE(@slotted_counters_write_at, UTC_TIMESTAMP(6));
{%- endif %}
        WHILE v_plan <> '' DO
{% call m::next_plan_entry("            ", p) %}{% endcall %}
{%- call bounds::add_to_slot("            ", p, true, false, p.has.periods) %}{% endcall %}
{%- if p.has.periods %}
            -- The periods are read only for a counter that tracks one.
            IF NOT v_untracked THEN
{%- call periods::read_keeps("                ", p, true) %}{% endcall %}
{% call periods::add_to_buckets("                ", p, "v_delta", "v_at", "v_keep_", "v_highest_", "v_offset_", "") %}{% endcall %}
            END IF;
{%- endif %}
        END WHILE;
{% call pending::clear("        ", p) %}{% endcall %}
    END IF;
END$$
{%- endif %}
{%- if p.has.changes_table %}


-- Makes the change recorded in {{ p.names.changes_table }}: a resize step, a
-- compaction{% match p.reset_body %}{% when ResetBody::Classic %}{% else %}, a reset{% endmatch %}.
/*!80000 DROP TRIGGER IF EXISTS `{{ p.names.change_trigger }}` */$$
CREATE /*M! OR REPLACE */ TRIGGER `{{ p.names.change_trigger }}` BEFORE INSERT ON `{{ p.names.changes_table }}`
FOR EACH ROW
BEGIN
    DECLARE p_name {{ p.types.name_type }};
{% call change::variables("    ", p) %}{% endcall %}
    SET p_name = NEW.`counter_name`;
    CASE NEW.`change_kind`
{%- if p.has.resize %}
{%- if p.slots.fixed.is_none() %}
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
{%- if p.has.periods %}
-- Applies a write of a counter that tracks periods: its delta to the slot,
-- and to its moment's bucket of each period the routine found tracked.
/*!80000 DROP TRIGGER IF EXISTS `{{ p.names.tracked_write_trigger }}` */$$
CREATE /*M! OR REPLACE */ TRIGGER `{{ p.names.tracked_write_trigger }}` BEFORE INSERT ON `{{ p.names.tracked_writes_table }}`
FOR EACH ROW
BEGIN
    DECLARE p_name {{ p.types.name_type }};
    DECLARE v_slot INT;
    DECLARE v_delta BIGINT;
    DECLARE v_message {{ p.types.message_type }};
    SET p_name = NEW.`counter_name`, v_slot = NEW.`counter_id`, v_delta = NEW.`delta`;
{%- call bounds::add_to_slot("    ", p, true) %}{% endcall %}
{% call periods::add_to_buckets("    ", p, "v_delta", "NEW.`counted_at`", "NEW.keep_", "NEW.highest_", "NEW.utc_offset_", "NEW.`room_seen`") %}{% endcall %}
{% call pending::clear("    ", p) %}{% endcall %}
END$$
{%- endif %}
{%- if p.has.bounds %}

-- Makes the spread a routine records in {{ p.names.spreads_table }} ({{ p.routine(Routine::Bound) }}):
-- locks every slot of the counter, checks the bounds on the total, and
-- writes the new total over the slots with their shares of the bounds.
/*!80000 DROP TRIGGER IF EXISTS `{{ p.names.spread_trigger }}` */$$
CREATE /*M! OR REPLACE */ TRIGGER `{{ p.names.spread_trigger }}` BEFORE INSERT ON `{{ p.names.spreads_table }}`
FOR EACH ROW
BEGIN
    DECLARE p_name {{ p.types.name_type }};
    DECLARE v_message {{ p.types.message_type }};
{% call bounds::declare("    ") %}{% endcall %}
    SET p_name = NEW.`counter_name`;
{% call bounds::apply("    ", p, "NEW.`spread_kind`", "NEW.`delta`", "NEW.`reset_start_date`", "NEW.`lowest`", "NEW.`highest`") %}{% endcall %}
{% call pending::clear("    ", p) %}{% endcall %}
END$$
{%- endif %}
