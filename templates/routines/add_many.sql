{%- import "_macros.sql" as m -%}
{%- import "routines/_add_many.sql" as batch -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.add_many }}` */$$
-- Adds each delta of p_deltas, a JSON object {"name": delta, ...} of at most
-- {{ p.batch_limit }} counters and {{ p.batch_bytes }} bytes, to one slot of its counter. Names that collate
-- equal are one counter: their deltas are summed. Every name and delta is
-- checked first, then all of them are applied: on any error none is, in
-- autocommit mode and inside the caller's transaction alike. The counters
-- are reached in the order of their names, so two batches cannot deadlock
-- on each other. In autocommit mode the batch is applied as
-- {{ p.add_many_once }} applies it, under an id of its own, by one
-- statement and with no transaction of the call's own: a call the server
-- kills leaves nothing open on the connection. In a caller's transaction
-- one UPDATE applies it, looking each slot up by its whole key, so that it
-- locks that row alone (a range over the keys would lock each next row
-- too); it is built as text (PREPARE), with names as hex literals: a quoted
-- literal would be read in the session's character set.
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
    -- No transaction is open: autocommit mode, outside one of the caller's.
    DECLARE v_alone BOOLEAN DEFAULT FALSE;
    DECLARE p_write_id BINARY(16);
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
        -- A savepoint that does not survive its own statement (1305) means
        -- autocommit mode with no transaction open.
        BEGIN
            DECLARE CONTINUE HANDLER FOR 1305 SET v_alone = TRUE;
            SAVEPOINT slotted_counters_batch;
            ROLLBACK TO SAVEPOINT slotted_counters_batch;
        END;
    END IF;
    IF v_entries > 0 AND v_alone THEN
        -- An id no other write has, on this server or another one of a
        -- cluster: the server's UUID() is unique on the server, RAND()
        -- tells servers apart, and SHA2 (MySQL 9 has no MD5) folds them into
        -- 16 bytes.
        SET p_write_id = UNHEX(LEFT(SHA2(CONCAT(UUID(), RAND()), 256), 32));
{% call m::record_write("        ", p, "''", "v_plan") %}{% endcall %}
{% call m::forget_expired_writes("        ", p) %}{% endcall %}
    ELSEIF v_entries > 0 THEN
        SET @slotted_counters_batch = CONCAT(
            'UPDATE `{{ p.table }}` AS slot JOIN (', v_rows, ') AS batch',
            ' ON slot.`counter_name` = batch.name AND slot.`counter_id` = batch.slot',
            ' SET slot.`counter` = slot.`counter` + batch.delta');
        PREPARE slotted_counters_batch FROM @slotted_counters_batch;
        SET @slotted_counters_batch = NULL;
        -- The statement and the slot 1 fallback below are undone together,
        -- to this savepoint, when either fails.
        SAVEPOINT slotted_counters_batch;
        BEGIN
            DECLARE EXIT HANDLER FOR SQLEXCEPTION
            BEGIN
                -- A deadlock has rolled back the caller's whole
                -- transaction, and the savepoint with it.
                BEGIN
                    DECLARE CONTINUE HANDLER FOR 1305 BEGIN END;
                    ROLLBACK TO SAVEPOINT slotted_counters_batch;
                END;
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
        RELEASE SAVEPOINT slotted_counters_batch;
        DEALLOCATE PREPARE slotted_counters_batch;
    END IF;
END$$
