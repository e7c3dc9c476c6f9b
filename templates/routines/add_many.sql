{%- import "_macros.sql" as m -%}
{%- import "routines/_add_many.sql" as batch -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.add_many }}` */$$
-- Adds each delta of p_deltas, a JSON object {"name": delta, ...} of at most
-- {{ p.batch_limit }} counters and {{ p.batch_bytes }} bytes, to one slot of its counter. Names that collate
-- equal are one counter: their deltas are summed. Every name and delta is
-- checked first, and all of them are applied by one statement: on any error
-- none is, in autocommit mode and inside the caller's transaction alike.
-- The statement reaches the counters in the order of their names, so two
-- batches cannot deadlock on each other, and looks each slot up by its
-- whole key, so it locks that row alone (a range over the keys would lock
-- each next row too). It is built as text (PREPARE), with names as hex
-- literals: a quoted literal would be read in the session's character set.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.add_many }}`(
    IN p_deltas {{ p.deltas_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
{%- call batch::check_variables(p) %}{% endcall %}
{%- if p.fixed_slots.is_none() %}
    DECLARE v_slots INT;
{%- endif %}
    DECLARE v_slot INT;
{%- call m::declare_position("    ", p) %}{% endcall %}
    DECLARE v_entries INT DEFAULT 0;
    DECLARE v_rows {{ p.statement_type }} DEFAULT '';
    -- The slots the statement aims at, `hex(name):slot:delta;` each.
    DECLARE v_plan {{ p.statement_type }} DEFAULT '';
{%- call batch::declare_parts(p, ["v_rows", "v_plan"]) %}{% endcall %}
    DECLARE v_entry {{ p.statement_type }};
    DECLARE v_own_transaction BOOLEAN DEFAULT FALSE;
    DECLARE v_found INT;
{%- call batch::open_batch(p) %}{% endcall %}
{% call m::check_name_form("            ", p) %}{% endcall %}
{%- call batch::sum_delta(p) %}{% endcall %}
{%- call batch::find_slot_count(p) %}{% endcall %}
{%- call batch::next_entry(p) %}{% endcall %}
            SET v_rows_part = CONCAT(v_rows_part, IF(v_entries = 1, 'SELECT ', ' UNION ALL SELECT '),
                'CONVERT(0x', HEX(p_name), ' USING {{ p.charset }}) COLLATE {{ p.collation }} AS name, ',
                v_slot, ' AS slot, ', v_delta, ' AS delta');
            SET v_plan_part = CONCAT(v_plan_part, HEX(p_name), ':', v_slot, ':', v_delta, ';');
{%- call batch::gather_full_parts(p, ["v_rows", "v_plan"]) %}{% endcall %}
        END IF;
    END WHILE;
    CLOSE c_keys;
{%- call batch::gather_last_parts(["v_rows", "v_plan"]) %}{% endcall %}
    IF v_entries > 0 THEN
        SET @slotted_counters_batch = CONCAT(
            'UPDATE `{{ p.table }}` AS slot JOIN (', v_rows, ') AS batch',
            ' ON slot.`counter_name` = batch.name AND slot.`counter_id` = batch.slot',
            ' SET slot.`counter` = slot.`counter` + batch.delta');
        PREPARE slotted_counters_batch FROM @slotted_counters_batch;
        SET @slotted_counters_batch = NULL;
        -- The statement and the slot 1 fallback below form one transaction:
        -- the caller's when one is open, else one of this call's own. A
        -- savepoint that does not survive its own statement (1305) means
        -- autocommit mode with no transaction, where START TRANSACTION
        -- commits nothing of the caller's.
        BEGIN
            DECLARE CONTINUE HANDLER FOR 1305 SET v_own_transaction = TRUE;
            SAVEPOINT slotted_counters_batch;
            ROLLBACK TO SAVEPOINT slotted_counters_batch;
        END;
        IF v_own_transaction THEN
{% call m::start_own_transaction("            ") %}{% endcall %}
        END IF;
        SAVEPOINT slotted_counters_batch;
        BEGIN
            DECLARE EXIT HANDLER FOR SQLEXCEPTION
            BEGIN
                IF v_own_transaction THEN
                    ROLLBACK;
                    SET @slotted_counters_left_open = NULL;
                ELSE
                    -- A deadlock has rolled back the caller's whole
                    -- transaction, and the savepoint with it.
                    BEGIN
                        DECLARE CONTINUE HANDLER FOR 1305 BEGIN END;
                        ROLLBACK TO SAVEPOINT slotted_counters_batch;
                    END;
                END IF;
                RESIGNAL;
            END;
            EXECUTE slotted_counters_batch;
            -- A slot that a resize removed since the lookup changed no row:
            -- its delta goes to slot 1, which exists as long as the counter
            -- does. The rows the statement changed stay locked until the
            -- transaction ends, so a slot missing now was missing then. (A
            -- counter deleted meanwhile takes its delta with it, as if the
            -- batch had come first.)
            IF ROW_COUNT() < v_entries THEN
                WHILE v_plan <> '' DO
{% call m::next_plan_entry("                    ", p) %}{% endcall %}
                    SELECT COUNT(*) INTO v_found FROM `{{ p.table }}`
                     WHERE `counter_name` = p_name AND `counter_id` = v_slot FOR UPDATE;
                    IF v_found = 0 THEN
                        UPDATE `{{ p.table }}` SET `counter` = `counter` + v_delta
                         WHERE `counter_name` = p_name AND `counter_id` = 1;
                    END IF;
                END WHILE;
            END IF;
        END;
        IF v_own_transaction THEN
{% call m::commit_own_transaction("            ") %}{% endcall %}
        ELSE
            RELEASE SAVEPOINT slotted_counters_batch;
        END IF;
        DEALLOCATE PREPARE slotted_counters_batch;
    END IF;
END$$
