-- Errors are SQLSTATE '45000' with MYSQL_ERRNO {{ p.unknown_counter }} (unknown counter),
-- {{ p.already_exists }} (counter already exists) or {{ p.invalid_argument }} (invalid argument).
DELIMITER $$

DROP PROCEDURE IF EXISTS `{{ p.setup }}`$$
{%- if let Some(slots) = p.fixed_slots %}
-- Creates counter p_name with its {{ slots }} slot rows (this package has a fixed
-- slot count: p_slots must be NULL or {{ slots }}). p_initial_value (NULL: 0) goes
-- into slot 1.
{%- else %}
-- Creates counter p_name with p_slots slot rows (NULL: {{ p.default_slots }}, at most
-- {{ p.max_slots }}). p_initial_value (NULL: 0) goes into slot 1.
{%- endif %}
CREATE PROCEDURE `{{ p.setup }}`(
    IN p_name {{ p.name_type }},
    IN p_description {{ p.description_type }},
    IN p_slots INT,
    IN p_initial_value BIGINT
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
{%- if let Some(slots) = p.fixed_slots %}
    DECLARE v_slots INT DEFAULT {{ slots }};
{%- else %}
    DECLARE v_slots INT DEFAULT COALESCE(p_slots, {{ p.default_slots }});
{%- endif %}
    DECLARE v_message VARCHAR(128);
    -- Two setups of one name can both pass any check made before the INSERT:
    -- the primary key decides, and its error becomes ours.
    DECLARE EXIT HANDLER FOR 1062
    BEGIN
        SET v_message = LEFT(CONCAT('counter already exists: ', QUOTE(p_name)), 128);
        SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = {{ p.already_exists }}, MESSAGE_TEXT = v_message;
    END;

    IF p_name IS NULL OR CHAR_LENGTH(TRIM(p_name)) = 0 THEN
        SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = {{ p.invalid_argument }},
            MESSAGE_TEXT = 'counter name must not be NULL or empty';
    END IF;
    IF CHAR_LENGTH(p_name) > {{ p.name_length }} THEN
        SET v_message = LEFT(CONCAT('counter name is longer than {{ p.name_length }} characters: ', QUOTE(p_name)), 128);
        SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = {{ p.invalid_argument }}, MESSAGE_TEXT = v_message;
    END IF;
    IF CHAR_LENGTH(p_description) > {{ p.description_length }} THEN
        SET v_message = LEFT(CONCAT('description is longer than {{ p.description_length }} characters, for counter: ', QUOTE(p_name)), 128);
        SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = {{ p.invalid_argument }}, MESSAGE_TEXT = v_message;
    END IF;
{%- if let Some(slots) = p.fixed_slots %}
    IF p_slots <> {{ slots }} THEN
        SET v_message = LEFT(CONCAT('slots must be NULL or {{ slots }} (this package has fixed slots), not ', p_slots, ', for counter: ', QUOTE(p_name)), 128);
        SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = {{ p.invalid_argument }}, MESSAGE_TEXT = v_message;
    END IF;
{%- else %}
    IF v_slots NOT BETWEEN 1 AND {{ p.max_slots }} THEN
        SET v_message = LEFT(CONCAT('slots must be between 1 and {{ p.max_slots }}, not ', v_slots, ', for counter: ', QUOTE(p_name)), 128);
        SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = {{ p.invalid_argument }}, MESSAGE_TEXT = v_message;
    END IF;
{%- endif %}

    -- One INSERT creates every slot, so a failed setup leaves no row behind.
    -- JSON_TABLE numbers the slots 1..v_slots on MySQL 8 and MariaDB alike.
    INSERT INTO `{{ p.table }}` (`counter_name`, `counter_id`, `description`, `start_date`, `counter`)
    SELECT p_name, slot.id, p_description, NOW(), IF(slot.id = 1, COALESCE(p_initial_value, 0), 0)
    FROM JSON_TABLE(CONCAT('[', REPEAT('0,', v_slots - 1), '0]'), '$[*]' COLUMNS (id FOR ORDINALITY)) AS slot;
END$$

DROP PROCEDURE IF EXISTS `{{ p.add }}`$$
{%- if p.auto_create %}
-- Adds p_delta (any signed BIGINT) to one slot of counter p_name, creating
-- the slot row, and so the counter, when it is not there yet: the lazy form
-- of the pattern. `counter` + p_delta, not VALUES(), which MySQL 8.0.20
-- deprecates. INSERT ... ON DUPLICATE KEY UPDATE takes gap and
-- insert-intention locks and can deadlock under concurrency (error 1213):
-- callers retry, as the Rust client does.
{%- else %}
-- Adds p_delta (any signed BIGINT) to one slot of counter p_name. Locks
-- exactly one row.
{%- endif %}
CREATE PROCEDURE `{{ p.add }}`(
    IN p_name {{ p.name_type }},
    IN p_delta BIGINT
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
{%- if p.fixed_slots.is_none() %}
    DECLARE v_slots INT;
{%- endif %}
    DECLARE v_slot INT;
    DECLARE v_message VARCHAR(128);
{%- if p.fixed_slots.is_none() %}
    -- An unknown counter leaves v_slots NULL; no "No data" warning.
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_slots = NULL;
{%- endif %}

    IF p_delta IS NULL THEN
        SET v_message = LEFT(CONCAT('delta must not be NULL, for counter: ', QUOTE(p_name)), 128);
        SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = {{ p.invalid_argument }}, MESSAGE_TEXT = v_message;
    END IF;
{%- if p.auto_create %}
    IF p_name IS NULL OR CHAR_LENGTH(TRIM(p_name)) = 0 THEN
        SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = {{ p.invalid_argument }},
            MESSAGE_TEXT = 'counter name must not be NULL or empty';
    END IF;
    IF CHAR_LENGTH(p_name) > {{ p.name_length }} THEN
        SET v_message = LEFT(CONCAT('counter name is longer than {{ p.name_length }} characters: ', QUOTE(p_name)), 128);
        SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = {{ p.invalid_argument }}, MESSAGE_TEXT = v_message;
    END IF;
{%- endif %}
    -- The slot is computed once, into a variable: RAND() in a WHERE clause
    -- would be evaluated again for every row scanned. FLOOR, not rounding,
    -- gives every slot the same chance.
{%- if p.fixed_slots.is_none() %}
    -- Slots are numbered 1..n, so the highest number is the slot count. Read
    -- as the last index entry, one row: inside a routine, MAX(`counter_id`)
    -- scans every slot. NULL when the counter does not exist.
    SELECT `counter_id` INTO v_slots FROM `{{ p.table }}` WHERE `counter_name` = p_name
     ORDER BY `counter_id` DESC LIMIT 1;
{%- endif %}
    SET v_slot = {{ p.slot_expression }};
{%- if p.auto_create %}
    INSERT INTO `{{ p.table }}` (`counter_name`, `counter_id`, `description`, `start_date`, `counter`)
    VALUES (p_name, v_slot, NULL, NOW(), p_delta)
    ON DUPLICATE KEY UPDATE `counter` = `counter` + p_delta;
{%- else %}
    UPDATE `{{ p.table }}` SET `counter` = `counter` + p_delta
     WHERE `counter_name` = p_name AND `counter_id` = v_slot;
    IF ROW_COUNT() = 0 THEN
        -- The slot may be gone since the lookup (a resize removed it): slot 1
        -- exists as long as the counter does, so the delta is not lost.
        UPDATE `{{ p.table }}` SET `counter` = `counter` + p_delta
         WHERE `counter_name` = p_name AND `counter_id` = 1;
        -- Still no row changed: the counter does not exist. An update never
        -- creates one. A delta of 0 changes no row either, so it needs a look
        -- of its own.
        IF ROW_COUNT() = 0 THEN
            IF p_delta <> 0 OR NOT EXISTS (SELECT 1 FROM `{{ p.table }}` WHERE `counter_name` = p_name) THEN
                SET v_message = LEFT(CONCAT('unknown counter: ', QUOTE(p_name)), 128);
                SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = {{ p.unknown_counter }}, MESSAGE_TEXT = v_message;
            END IF;
        END IF;
    END IF;
{%- endif %}
END$$

DROP PROCEDURE IF EXISTS `{{ p.increment }}`$$
-- Adds 1 to counter p_name.
CREATE PROCEDURE `{{ p.increment }}`(
    IN p_name {{ p.name_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    CALL `{{ p.add }}`(p_name, 1);
END$$

DROP PROCEDURE IF EXISTS `{{ p.reset }}`$$
-- Sets counter p_name to p_value (NULL: 0), kept in slot 1, every other slot
-- to 0, and its start date to now when p_reset_start_date is TRUE.
{%- if p.auto_create %}
-- Lazy counters keep only the rows that were hit, so slot 1 may be missing:
-- the reset rewrites the counter as one row, in a transaction of its own,
-- like DDL: it commits a transaction open on the connection.
{%- endif %}
CREATE PROCEDURE `{{ p.reset }}`(
    IN p_name {{ p.name_type }},
    IN p_value BIGINT,
    IN p_reset_start_date BOOLEAN
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_message VARCHAR(128);
{%- if p.auto_create %}
    DECLARE v_slots INT;
    DECLARE v_description VARCHAR({{ p.description_length }});
    DECLARE v_start_date DATETIME;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION
    BEGIN
        ROLLBACK;
        RESIGNAL;
    END;

    START TRANSACTION;
    SELECT COUNT(*), MAX(`description`), MIN(`start_date`) INTO v_slots, v_description, v_start_date
      FROM `{{ p.table }}` WHERE `counter_name` = p_name FOR UPDATE;
    IF v_slots = 0 THEN
        SET v_message = LEFT(CONCAT('unknown counter: ', QUOTE(p_name)), 128);
        SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = {{ p.unknown_counter }}, MESSAGE_TEXT = v_message;
    END IF;
    DELETE FROM `{{ p.table }}` WHERE `counter_name` = p_name;
    INSERT INTO `{{ p.table }}` (`counter_name`, `counter_id`, `description`, `start_date`, `counter`)
    VALUES (p_name, 1, v_description, IF(p_reset_start_date IS TRUE, NOW(), v_start_date), COALESCE(p_value, 0));
    COMMIT;
{%- else %}

    -- One statement locks and rewrites every slot: an increment lands wholly
    -- before the reset or wholly after it.
    UPDATE `{{ p.table }}`
       SET `counter` = IF(`counter_id` = 1, COALESCE(p_value, 0), 0),
           `start_date` = IF(p_reset_start_date IS TRUE, NOW(), `start_date`)
     WHERE `counter_name` = p_name;
    -- A reset to the value a counter already has changes no row.
    IF ROW_COUNT() = 0 THEN
        IF NOT EXISTS (SELECT 1 FROM `{{ p.table }}` WHERE `counter_name` = p_name) THEN
            SET v_message = LEFT(CONCAT('unknown counter: ', QUOTE(p_name)), 128);
            SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = {{ p.unknown_counter }}, MESSAGE_TEXT = v_message;
        END IF;
    END IF;
{%- endif %}
END$$

{%- if p.fixed_slots.is_none() %}
DROP PROCEDURE IF EXISTS `{{ p.resize }}`$$
-- Gives counter p_name p_slots slots (1 to {{ p.max_slots }}), keeping its total: a
-- shrink adds the removed slots' values to slot 1. Safe while increments run:
-- it locks every slot first, and an increment whose slot was removed lands
-- in slot 1. Runs as a transaction of its own, like DDL: it commits a
-- transaction open on the connection.
CREATE PROCEDURE `{{ p.resize }}`(
    IN p_name {{ p.name_type }},
    IN p_slots INT
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_slots INT;
    DECLARE v_moved BIGINT;
    DECLARE v_description VARCHAR({{ p.description_length }});
    DECLARE v_start_date DATETIME;
    DECLARE v_message VARCHAR(128);
    DECLARE EXIT HANDLER FOR SQLEXCEPTION
    BEGIN
        ROLLBACK;
        RESIGNAL;
    END;

    IF p_slots IS NULL OR p_slots NOT BETWEEN 1 AND {{ p.max_slots }} THEN
        SET v_message = LEFT(CONCAT('slots must be between 1 and {{ p.max_slots }}, not ', COALESCE(p_slots, 'NULL'), ', for counter: ', QUOTE(p_name)), 128);
        SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = {{ p.invalid_argument }}, MESSAGE_TEXT = v_message;
    END IF;
    START TRANSACTION;
    SELECT COUNT(*), MAX(`description`), MIN(`start_date`) INTO v_slots, v_description, v_start_date
      FROM `{{ p.table }}` WHERE `counter_name` = p_name FOR UPDATE;
    IF v_slots = 0 THEN
        SET v_message = LEFT(CONCAT('unknown counter: ', QUOTE(p_name)), 128);
        SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = {{ p.unknown_counter }}, MESSAGE_TEXT = v_message;
    END IF;
    IF p_slots > v_slots THEN
        INSERT INTO `{{ p.table }}` (`counter_name`, `counter_id`, `description`, `start_date`, `counter`)
        SELECT p_name, v_slots + slot.id, v_description, v_start_date, 0
        FROM JSON_TABLE(CONCAT('[', REPEAT('0,', p_slots - v_slots - 1), '0]'), '$[*]' COLUMNS (id FOR ORDINALITY)) AS slot;
    ELSEIF p_slots < v_slots THEN
        SELECT CAST(SUM(`counter`) AS SIGNED) INTO v_moved
          FROM `{{ p.table }}` WHERE `counter_name` = p_name AND `counter_id` > p_slots;
        DELETE FROM `{{ p.table }}` WHERE `counter_name` = p_name AND `counter_id` > p_slots;
        UPDATE `{{ p.table }}` SET `counter` = `counter` + v_moved
         WHERE `counter_name` = p_name AND `counter_id` = 1;
    END IF;
    COMMIT;
END$$
{%- endif %}

DROP PROCEDURE IF EXISTS `{{ p.compact }}`$$
-- Folds every slot of counter p_name into slot 1, total unchanged{% if !p.auto_create %}: the
-- other slots become 0{% endif %}. Runs as a transaction of its own, like DDL: it
-- commits a transaction open on the connection.
CREATE PROCEDURE `{{ p.compact }}`(
    IN p_name {{ p.name_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_slots INT;
    DECLARE v_total BIGINT;
{%- if p.auto_create %}
    DECLARE v_description VARCHAR({{ p.description_length }});
    DECLARE v_start_date DATETIME;
{%- endif %}
    DECLARE v_message VARCHAR(128);
    DECLARE EXIT HANDLER FOR SQLEXCEPTION
    BEGIN
        ROLLBACK;
        RESIGNAL;
    END;

    START TRANSACTION;
{%- if p.auto_create %}
    SELECT COUNT(*), CAST(SUM(`counter`) AS SIGNED), MAX(`description`), MIN(`start_date`)
      INTO v_slots, v_total, v_description, v_start_date
      FROM `{{ p.table }}` WHERE `counter_name` = p_name FOR UPDATE;
{%- else %}
    SELECT COUNT(*), CAST(SUM(`counter`) AS SIGNED) INTO v_slots, v_total
      FROM `{{ p.table }}` WHERE `counter_name` = p_name FOR UPDATE;
{%- endif %}
    IF v_slots = 0 THEN
        SET v_message = LEFT(CONCAT('unknown counter: ', QUOTE(p_name)), 128);
        SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = {{ p.unknown_counter }}, MESSAGE_TEXT = v_message;
    END IF;
{%- if p.auto_create %}
    -- Lazy counters keep only the rows that were hit: slot 1 may be missing.
    DELETE FROM `{{ p.table }}` WHERE `counter_name` = p_name;
    INSERT INTO `{{ p.table }}` (`counter_name`, `counter_id`, `description`, `start_date`, `counter`)
    VALUES (p_name, 1, v_description, v_start_date, v_total);
{%- else %}
    UPDATE `{{ p.table }}` SET `counter` = IF(`counter_id` = 1, v_total, 0)
     WHERE `counter_name` = p_name;
{%- endif %}
    COMMIT;
END$$

DROP PROCEDURE IF EXISTS `{{ p.delete }}`$$
-- Removes counter p_name and all its slots.
CREATE PROCEDURE `{{ p.delete }}`(
    IN p_name {{ p.name_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_message VARCHAR(128);

    DELETE FROM `{{ p.table }}` WHERE `counter_name` = p_name;
    IF ROW_COUNT() = 0 THEN
        SET v_message = LEFT(CONCAT('unknown counter: ', QUOTE(p_name)), 128);
        SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = {{ p.unknown_counter }}, MESSAGE_TEXT = v_message;
    END IF;
END$$

DROP FUNCTION IF EXISTS `{{ p.get }}`$$
-- The value of counter p_name: the sum of its slots, or NULL when it does
-- not exist, so one SELECT can read many names. READS SQL DATA: with binary
-- logging on, a function without a characteristic fails (error 1418).
CREATE FUNCTION `{{ p.get }}`(
    p_name {{ p.name_type }}
)
RETURNS BIGINT
NOT DETERMINISTIC
READS SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    RETURN (SELECT CAST(SUM(`counter`) AS SIGNED) FROM `{{ p.table }}` WHERE `counter_name` = p_name);
END$$

DROP FUNCTION IF EXISTS `{{ p.estimate }}`$$
-- An estimate of counter p_name that reads one slot, chosen at random, and
-- multiplies it by the slot count: for dashboards that must not scan. NULL
-- when the counter does not exist. Exact on average for increments spread
-- over the slots; a value kept in slot 1 (an initial value, a reset, a
-- compact) makes single estimates swing widely.
CREATE FUNCTION `{{ p.estimate }}`(
    p_name {{ p.name_type }}
)
RETURNS BIGINT
NOT DETERMINISTIC
READS SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_slots INT;
    DECLARE v_slot INT;
    DECLARE v_value BIGINT;
{%- if p.fixed_slots.is_none() %}
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_slots = NULL;
{%- endif %}
{%- if let Some(slots) = p.fixed_slots %}
    SET v_slots = {{ slots }};
    IF NOT EXISTS (SELECT 1 FROM `{{ p.table }}` WHERE `counter_name` = p_name) THEN
        RETURN NULL;
    END IF;
{%- else %}
    SELECT `counter_id` INTO v_slots FROM `{{ p.table }}` WHERE `counter_name` = p_name
     ORDER BY `counter_id` DESC LIMIT 1;
    IF v_slots IS NULL THEN
        RETURN NULL;
    END IF;
{%- endif %}
    SET v_slot = FLOOR(RAND() * v_slots) + 1;
    SELECT MAX(`counter`) INTO v_value FROM `{{ p.table }}` WHERE `counter_name` = p_name AND `counter_id` = v_slot;
    RETURN COALESCE(v_value, 0) * v_slots;
END$$

DELIMITER ;
