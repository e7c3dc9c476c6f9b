-- MySQL revokes a routine's grants when it drops it, and the install drops
-- each routine before its CREATE: after it, this procedure gives back the
-- grants on p_routine (NULL: all) that the probe read; a call in between
-- fails with 1370. Dropped at the end.
DROP PROCEDURE IF EXISTS `{{ p.install.grants_keeper }}`;
DELIMITER $$
CREATE PROCEDURE `{{ p.install.grants_keeper }}`(
    IN p_routine VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_done BOOLEAN DEFAULT FALSE;
    DECLARE v_routine VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
    DECLARE v_kind VARCHAR(9) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
    DECLARE v_privileges VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
    DECLARE v_account VARCHAR(512) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
    DECLARE c_grants CURSOR FOR
        SELECT saved.routine, saved.kind, saved.privileges, saved.account
          FROM JSON_TABLE(COALESCE(@slotted_counters_grants, '[]'), '$[*]' COLUMNS (
                   routine VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$.routine',
                   kind VARCHAR(9) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$.kind',
                   privileges VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$.privileges',
                   account VARCHAR(512) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$.account')) AS saved
         WHERE saved.routine = p_routine OR p_routine IS NULL;
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = TRUE;
    OPEN c_grants;
    FETCH c_grants INTO v_routine, v_kind, v_privileges, v_account;
    WHILE NOT v_done DO
        SET @slotted_counters_grant = CONCAT('GRANT ',
            COALESCE(NULLIF(CONCAT_WS(', ', IF(FIND_IN_SET('Execute', v_privileges), 'EXECUTE', NULL),
                                      IF(FIND_IN_SET('Alter Routine', v_privileges), 'ALTER ROUTINE', NULL)), ''), 'USAGE'),
            ' ON ', v_kind, ' `', REPLACE(DATABASE(), '`', '``'), '`.`', v_routine, '` TO ', v_account,
            IF(FIND_IN_SET('Grant', v_privileges), ' WITH GRANT OPTION', ''));
        PREPARE slotted_counters_grant FROM @slotted_counters_grant;
        EXECUTE slotted_counters_grant;
        DEALLOCATE PREPARE slotted_counters_grant;
        FETCH c_grants INTO v_routine, v_kind, v_privileges, v_account;
    END WHILE;
    CLOSE c_grants;
    SET @slotted_counters_grant = NULL;
END$$
DELIMITER ;
-- Every saved grant given once before anything is dropped: an account without
-- GRANT OPTION or EXECUTE on the database stops here (1370), nothing changed.
/*!80000 CALL `{{ p.install.grants_keeper }}`(NULL) */;
