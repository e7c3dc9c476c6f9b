{%- import "_macros.sql" as m -%}
{%- import "routines/_changes.sql" as change -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::Resize) }}` */$$
-- Gives counter p_name p_slots slots (a whole number, 1 to {{ p.slots.max }}), keeping
-- its total: a shrink adds the removed slots' values to slot 1{% match p.slots.choice %}{% when SlotChoice::Node %} (on a
-- cluster, to the slot of the node it runs on){% else %}{% endmatch %}; an increment
-- whose slot is gone lands in slot 1. A growth is one statement; a shrink
-- one per slot, last first, each touching two rows so that it rarely meets
-- another node's increment.{% if p.cluster.changes_in_own_transaction %} On MariaDB in autocommit mode each step is
-- a transaction of its own.{% endif %} An interrupted shrink (a lost certification,
-- 1213 or 3101, a kill) keeps the total; calling again finishes it.{% if p.slots.group_members.is_some() %} Each
-- shrink step first waits until the member has applied what the group
-- certified before it.{% endif %}
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::Resize) }}`(
    IN p_name {{ p.types.name_type }},
    IN p_slots {{ p.types.number_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_message {{ p.types.message_type }};
    DECLARE v_slots INT;
    DECLARE v_number DECIMAL(65, 30);
    DECLARE v_new_slots INT;
    -- The slot a shrink moves the removed slots' values into.
    DECLARE v_target INT DEFAULT 1;
{%- call m::declare_position("    ", p) %}{% endcall %}

{% call m::check_name_form("    ", p) %}{% endcall %}
{% call m::read_number("    ", p, "p_slots", "v_number") %}{% endcall %}
    IF NOT COALESCE(v_number = TRUNCATE(v_number, 0) AND v_number BETWEEN 1 AND {{ p.slots.max }}, FALSE) THEN
{% call m::refuse("        ", p, p.errors.invalid_argument) %}'{{ refusals::slots_out_of_range(*p.slots.max) }} ', {% call m::number_text("p_slots", "v_number") %}{% endcall %}, '{{ refusals::FOR_COUNTER }}: ', QUOTE(p_name){% endcall %}
    END IF;
    SET v_new_slots = v_number;
{% call m::read_last_slot("    ", p) %}{% endcall %}
    IF v_slots = 0 THEN
{% call m::unknown_counter("        ", p) %}{% endcall %}
    END IF;
    IF v_new_slots > v_slots THEN
{% call change::make("        ", p, "grow", "v_new_slots", "NULL", "NULL", "NULL") %}{% endcall %}
    ELSEIF v_new_slots < v_slots THEN
{%- match p.slots.choice %}
{%- when SlotChoice::Node %}
        -- Into this node's own slot, which no other node writes: a step then
        -- meets other nodes' increments only on the slot it removes.
{%- call m::find_position("        ", p) %}{% endcall %}
        SET v_target = {{ p.slots.node_position }};
        SET v_target = IF(v_target <= v_new_slots, v_target, (v_target - 1) % v_new_slots + 1);
{%- else %}
{%- endmatch %}
        WHILE v_slots > v_new_slots DO
{%- if p.slots.group_members.is_some() %}
{% call m::wait_for_the_group("            ") %}{% endcall %}
{%- endif %}
{% call change::make("            ", p, "shrink", "v_slots", "v_target", "NULL", "NULL") %}{% endcall %}
            -- Read again: another resize may have changed the last slot.
{% call m::read_last_slot("            ", p) %}{% endcall %}
        END WHILE;
    END IF;
END$$

