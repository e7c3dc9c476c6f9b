{%- import "_macros.sql" as m -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.add_many }}` */$$
-- Adds each delta of p_deltas, a JSON object {"name": delta, ...} of at most
-- {{ p.batch_limit }} counters, to one slot of its counter{% if p.auto_create %}, creating the slot
-- row, and so the counter, when it is not there yet{% endif %}. Names that collate
-- equal are one counter: their deltas are summed. Every name and delta is
-- checked first, and all of them are applied by one statement: on any error
-- none is, in autocommit mode and inside the caller's transaction alike.
-- The statement reaches the counters in the order of their names, so two
-- batches cannot deadlock on each other{% if !p.auto_create %}, and looks each slot up by its
-- whole key, so it locks that row alone (a range over the keys would lock
-- each next row too){% endif %}. It is built as text (PREPARE), with names as hex
-- literals: a quoted literal would be read in the session's character set.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.add_many }}`(
    IN p_deltas {{ p.deltas_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_keys {{ p.deltas_type }};
    DECLARE v_key {{ p.name_type }};
    -- The counter being summed: the first of the keys that collate equal.
    DECLARE v_counter {{ p.name_type }};
    -- The name being checked; named like counter_add's parameter, so the
    -- shared checks and messages apply.
    DECLARE p_name {{ p.name_type }};
    DECLARE v_text {{ p.deltas_type }};
    DECLARE v_delta BIGINT;
    DECLARE v_done BOOLEAN DEFAULT FALSE;
{%- if p.fixed_slots.is_none() %}
    DECLARE v_slots INT;
{%- endif %}
    DECLARE v_slot INT;
    DECLARE v_entries INT DEFAULT 0;
    DECLARE v_rows {{ p.statement_type }} DEFAULT '';
{%- if p.auto_create %}
    DECLARE v_cases {{ p.statement_type }} DEFAULT '';
{%- endif %}
{%- if !p.auto_create %}
    -- The slots the statement aims at, `hex(name):slot:delta;` each.
    DECLARE v_plan {{ p.statement_type }} DEFAULT '';
    DECLARE v_entry {{ p.statement_type }};
    DECLARE v_own_transaction BOOLEAN DEFAULT FALSE;
{%- endif %}
    DECLARE v_message {{ p.message_type }};
    -- The names in the order of the package's collation.
    DECLARE c_keys CURSOR FOR
        WITH digit (d) AS ({{ p.batch_numbers.digits }})
        SELECT JSON_UNQUOTE(JSON_EXTRACT(v_keys, CONCAT('$[', entry.id - 1, ']'))) AS name
          FROM (SELECT {{ p.batch_numbers.number }} AS id FROM {{ p.batch_numbers.tables }}) AS entry
         WHERE entry.id <= JSON_LENGTH(v_keys)
         ORDER BY name COLLATE {{ p.collation }};
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = TRUE;

    IF p_deltas IS NULL OR NOT JSON_VALID(p_deltas) OR JSON_TYPE(p_deltas) <> 'OBJECT' THEN
        SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = {{ p.invalid_argument }},
            MESSAGE_TEXT = 'deltas must be a JSON object of counter names and integers';
    END IF;
    IF JSON_LENGTH(p_deltas) > {{ p.batch_limit }} THEN
        SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = {{ p.invalid_argument }},
            MESSAGE_TEXT = 'deltas name more than {{ p.batch_limit }} counters';
    END IF;
    SET v_keys = JSON_KEYS(p_deltas);

    -- Checks every name and delta, picks each counter's slot, and writes the
    -- statement's parts; nothing is written to the table yet.
    OPEN c_keys;
    FETCH c_keys INTO v_key;
    WHILE NOT v_done DO
        SET v_counter = v_key, v_delta = 0;
        WHILE NOT v_done AND v_key = v_counter DO
            SET p_name = v_key;
{%- if p.auto_create %}
{% call m::check_name("            ", p) %}{% endcall %}
{%- else %}
{% call m::check_name_length("            ", p) %}{% endcall %}
{%- endif %}
            SET v_text = JSON_EXTRACT(p_deltas, CONCAT('$.', JSON_QUOTE(v_key)));
            IF JSON_TYPE(v_text) <> 'INTEGER' OR v_text NOT REGEXP '^-?[0-9]{1,19}$'
               OR CAST(CAST(v_text AS SIGNED) AS CHAR CHARACTER SET {{ p.charset }}) COLLATE {{ p.collation }} <> v_text THEN
                SET v_message = LEFT(CONCAT('delta must be an integer, for counter: ', QUOTE(v_key)), 128);
                SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = {{ p.invalid_argument }}, MESSAGE_TEXT = v_message;
            END IF;
            SET v_delta = v_delta + CAST(v_text AS SIGNED);
            FETCH c_keys INTO v_key;
        END WHILE;
        SET p_name = v_counter;
{%- if !p.auto_create %}
        -- A look at the counter's last slot, as in counter_add: SELECT ...
        -- INTO, because with binary logging a subquery in SET or IF locks the
        -- rows it reads. In a block of its own, whose NOT FOUND does not end
        -- the cursor.
        BEGIN
            DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_slot = NULL;
            SET v_slot = NULL;
            SELECT `counter_id` INTO v_slot FROM `{{ p.table }}` WHERE `counter_name` = p_name
             ORDER BY `counter_id` DESC LIMIT 1;
        END;
        IF v_slot IS NULL THEN
{% call m::unknown_counter("            ", p) %}{% endcall %}
        END IF;
{%- if p.fixed_slots.is_none() %}
        SET v_slots = v_slot;
{%- endif %}
{%- endif %}
        IF v_delta <> 0 THEN
{%- for value in p.slot_assignments %}
            SET v_slot = {{ value }};
{%- endfor %}
            SET v_entries = v_entries + 1;
{%- if p.auto_create %}
            SET v_rows = CONCAT(v_rows, IF(v_entries = 1, '', ', '),
                '(CONVERT(0x', HEX(p_name), ' USING {{ p.charset }}), ', v_slot, ', NULL, NOW(), ', v_delta, ')');
            SET v_cases = CONCAT(v_cases, ' WHEN CONVERT(0x', HEX(p_name), ' USING {{ p.charset }}) COLLATE {{ p.collation }} THEN ', v_delta);
{%- else %}
            SET v_rows = CONCAT(v_rows, IF(v_entries = 1, 'SELECT ', ' UNION ALL SELECT '),
                'CONVERT(0x', HEX(p_name), ' USING {{ p.charset }}) COLLATE {{ p.collation }} AS name, ',
                v_slot, ' AS slot, ', v_delta, ' AS delta');
            SET v_plan = CONCAT(v_plan, HEX(p_name), ':', v_slot, ':', v_delta, ';');
{%- endif %}
        END IF;
    END WHILE;
    CLOSE c_keys;
    IF v_entries > 0 THEN
{%- if p.auto_create %}
        SET @slotted_counters_batch = CONCAT(
            'INSERT INTO `{{ p.table }}` (`counter_name`, `counter_id`, `description`, `start_date`, `counter`) VALUES ',
            v_rows, ' ON DUPLICATE KEY UPDATE `counter` = `counter` + CASE `counter_name`', v_cases, ' END');
        PREPARE slotted_counters_batch FROM @slotted_counters_batch;
        SET @slotted_counters_batch = NULL;
        EXECUTE slotted_counters_batch;
        DEALLOCATE PREPARE slotted_counters_batch;
{%- else %}
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
            START TRANSACTION;
        END IF;
        SAVEPOINT slotted_counters_batch;
        BEGIN
            DECLARE EXIT HANDLER FOR SQLEXCEPTION
            BEGIN
                IF v_own_transaction THEN
                    ROLLBACK;
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
                    SET v_entry = SUBSTRING_INDEX(v_plan, ';', 1);
                    SET v_plan = SUBSTRING(v_plan, LENGTH(v_entry) + 2);
                    SET p_name = CONVERT(UNHEX(SUBSTRING_INDEX(v_entry, ':', 1)) USING {{ p.charset }});
                    SET v_slot = SUBSTRING_INDEX(SUBSTRING_INDEX(v_entry, ':', 2), ':', -1);
                    SET v_delta = SUBSTRING_INDEX(v_entry, ':', -1);
                    IF NOT EXISTS (SELECT 1 FROM `{{ p.table }}` WHERE `counter_name` = p_name AND `counter_id` = v_slot) THEN
                        UPDATE `{{ p.table }}` SET `counter` = `counter` + v_delta
                         WHERE `counter_name` = p_name AND `counter_id` = 1;
                    END IF;
                END WHILE;
            END IF;
        END;
        IF v_own_transaction THEN
            COMMIT;
        ELSE
            RELEASE SAVEPOINT slotted_counters_batch;
        END IF;
        DEALLOCATE PREPARE slotted_counters_batch;
{%- endif %}
    END IF;
END$$
