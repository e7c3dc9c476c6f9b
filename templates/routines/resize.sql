{%- import "_macros.sql" as m -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.resize }}` */$$
-- Gives counter p_name p_slots slots (a whole number, 1 to {{ p.max_slots }}), keeping its total: a
-- shrink adds the removed slots' values to slot 1{% match p.slot_choice %}{% when SlotChoice::Node %} (on a cluster, to the
-- slot of the node it runs on){% else %}{% endmatch %}. Safe while increments run:
-- an increment whose slot was removed lands in slot 1. Runs in transactions
-- of its own, like DDL: it commits a transaction open on the connection. A
-- growth is one transaction. A shrink moves one slot per transaction, the
-- last first: each touches two rows, so on a multi-primary cluster it rarely
-- meets another node's increment, where one transaction over every removed
-- slot lost certification to any of them. Interrupted (a lost
-- certification, 1213 or 3101), a shrink leaves fewer slots and the total
-- intact; calling it again finishes it.{% if p.group_members.is_some() %} Each shrink step first waits
-- until the member has applied what the group certified before it.{% endif %}
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.resize }}`(
    IN p_name {{ p.name_type }},
    IN p_slots {{ p.number_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_message {{ p.message_type }};

{% call m::end_left_open("    ") %}{% endcall %}
    -- Arguments are checked before the transaction and outside its handler:
    -- a bad one rolls back nothing, not even a transaction of the caller's.
{% call m::check_name_form("    ", p) %}{% endcall %}
    IF NOT COALESCE(p_slots = TRUNCATE(p_slots, 0) AND p_slots BETWEEN 1 AND {{ p.max_slots }}, FALSE) THEN
        SET v_message = LEFT(CONCAT('slots must be a whole number between 1 and {{ p.max_slots }}, not ', COALESCE(p_slots + 0E0, 'NULL'), ', for counter: ', QUOTE(p_name)), 128);
        SIGNAL SQLSTATE '{{ p.refusal_state }}' SET MYSQL_ERRNO = {{ p.invalid_argument }}, MESSAGE_TEXT = v_message;
    END IF;
    BEGIN
        DECLARE v_slots INT;
        DECLARE v_moved BIGINT;
        DECLARE v_found INT;
        DECLARE v_above INT;
        -- The slot a shrink moves the removed slots' values into.
        DECLARE v_target INT DEFAULT 1;
{%- call m::declare_position("        ", p) %}{% endcall %}
        DECLARE v_description {{ p.description_variable_type }};
        DECLARE v_start_date DATETIME;
{%- if p.group_members.is_some() %}
        -- The session's group_replication_consistency while a shrink waits
        -- for the group.
        DECLARE v_consistency VARCHAR(64) CHARACTER SET utf8mb4;
{%- endif %}
{% call m::own_transaction("        ", p.group_members.is_some()) %}{% endcall %}
        SELECT COUNT(*), MAX(`description`), MIN(`start_date`) INTO v_slots, v_description, v_start_date
          FROM `{{ p.table }}` FORCE INDEX (PRIMARY) WHERE `counter_name` = p_name FOR UPDATE;
        IF v_slots = 0 THEN
{% call m::unknown_counter("            ", p) %}{% endcall %}
        END IF;
        IF p_slots > v_slots THEN
{% call m::slot_rows("            ", p, "v_slots + slot.id", "v_description, v_start_date, 0", "p_slots - v_slots") %}{% endcall %}
        ELSEIF p_slots < v_slots THEN
            -- The locking read above ends here. Each step finds the
            -- counter's last slot as it is then (another resize may have
            -- changed it) with a read of its own statement, then moves it
            -- into slot 1 in a transaction that locks that slot, the gap
            -- above it, and slot 1: three keys, where locking every slot made
            -- Group Replication's applier roll the step back for each remote
            -- increment. No LIMIT: statement-based logging calls it unsafe.
            COMMIT;
{%- match p.slot_choice %}
{%- when SlotChoice::Node %}
            -- Into the slot this node increments itself, which no other
            -- node writes: the step then meets other nodes' increments only
            -- on the slot it removes.
{%- call m::find_position("            ", p) %}{% endcall %}
            SET v_target = {{ p.node_position }};
            SET v_target = IF(v_target <= p_slots, v_target, (v_target - 1) % p_slots + 1);
{%- else %}
{%- endmatch %}
{%- if p.group_members.is_some() %}
{% call m::wait_for_the_group("            ") %}{% endcall %}
{%- endif %}
            WHILE v_slots > p_slots DO
                SELECT COALESCE(MAX(`counter_id`), 0) INTO v_slots
                  FROM `{{ p.table }}` FORCE INDEX (PRIMARY) WHERE `counter_name` = p_name;
                IF v_slots > p_slots THEN
{% call m::start_own_transaction("                    ") %}{% endcall %}
                    SELECT COUNT(*), CAST(COALESCE(SUM(`counter`), 0) AS SIGNED) INTO v_found, v_moved
                      FROM `{{ p.table }}` WHERE `counter_name` = p_name AND `counter_id` = v_slots FOR UPDATE;
                    SELECT COUNT(*) INTO v_above
                      FROM `{{ p.table }}` WHERE `counter_name` = p_name AND `counter_id` = v_slots + 1 FOR UPDATE;
                    IF v_found = 1 AND v_above = 0 THEN
                        DELETE FROM `{{ p.table }}` WHERE `counter_name` = p_name AND `counter_id` = v_slots;
                        UPDATE `{{ p.table }}` SET `counter` = `counter` + v_moved
                         WHERE `counter_name` = p_name AND `counter_id` = v_target;
                    END IF;
                    COMMIT;
                END IF;
            END WHILE;
{%- if p.group_members.is_some() %}
{% call m::restore_consistency("            ") %}{% endcall %}
{%- endif %}
        END IF;
{% call m::commit_own_transaction("        ") %}{% endcall %}
    END;
END$$
