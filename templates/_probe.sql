-- The install probe, run by SET (MariaDB's DO ignores a signal) before anything
-- changes: 1419 here is binary logging without SUPER; its refusals are errno
-- {{ p.errors.install_refused }}, leaving only the probe, which the next run drops.
DROP FUNCTION IF EXISTS `{{ p.install.probe }}`;
DELIMITER $$
CREATE FUNCTION `{{ p.install.probe }}`() RETURNS LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin READS SQL DATA
BEGIN
    DECLARE v_supported BOOLEAN DEFAULT FALSE;
    DECLARE v_grants LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
    DECLARE v_clash {{ p.types.message_type }};
{%- if !p.install.lacked_features.is_empty() %}
    DECLARE v_installed VARCHAR(1024) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
    DECLARE v_lacking {{ p.types.message_type }};
{%- endif %}
    DECLARE v_message {{ p.types.message_type }};
    -- MariaDB needs innodb_snapshot_isolation, which the routines read.
    /*!80019 SET v_supported = TRUE; */
    /*M!100600 SET v_supported = EXISTS (SELECT 1 FROM information_schema.GLOBAL_VARIABLES
                                          WHERE VARIABLE_NAME = 'INNODB_SNAPSHOT_ISOLATION'); */
    IF NOT v_supported THEN
        SIGNAL SQLSTATE '{{ p.errors.sqlstate }}' SET MYSQL_ERRNO = {{ p.errors.install_refused }},
            MESSAGE_TEXT = '{{ refusals::SERVER_UNSUPPORTED }}: nothing changed';
    END IF;
    -- Refuses a foreign object under a package name: a table or view without
    -- its columns, a routine without the mark, a trigger on another table.
    SELECT MIN(clash) INTO v_clash FROM (
{%- for relation in p.install.relations %}
        SELECT '{% if relation.is_view %}view{% else %}table{% endif %} `{{ relation.name }}` (--{% if loop.first %}table{% else %}prefix{% endif %})' AS clash
          FROM information_schema.TABLES AS found
         WHERE found.TABLE_SCHEMA = DATABASE() AND found.TABLE_NAME = '{{ relation.name }}'
           AND (found.TABLE_TYPE <> '{% if relation.is_view %}VIEW{% else %}BASE TABLE{% endif %}' OR {{ relation.identifying_columns.len() }} > (SELECT COUNT(*) FROM information_schema.COLUMNS AS found_column
                WHERE found_column.TABLE_SCHEMA = found.TABLE_SCHEMA AND found_column.TABLE_NAME = found.TABLE_NAME
                  AND found_column.COLUMN_NAME IN ({% for column in relation.identifying_columns %}{% if !loop.first %}, {% endif %}'{{ column }}'{% endfor %})))
        UNION ALL
{%- endfor %}
        SELECT CONCAT(LOWER(ROUTINE_TYPE), ' `', ROUTINE_NAME, '` (--prefix)') FROM information_schema.ROUTINES
         WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_COMMENT NOT LIKE '{{ p.install.routine_mark }}%'
           AND ROUTINE_NAME IN ({% for routine in p.routines %}'{{ routine.name }}', {% endfor %}'{{ p.install.grants_keeper }}')
{%- if !p.names.trigger_tables.is_empty() %}
        UNION ALL
        SELECT CONCAT('trigger `', TRIGGER_NAME, '` (--prefix)') FROM information_schema.TRIGGERS
         WHERE TRIGGER_SCHEMA = DATABASE() AND ({% for (trigger, table) in p.names.trigger_tables %}{% if !loop.first %}
             OR {% endif %}(TRIGGER_NAME = '{{ trigger }}' AND EVENT_OBJECT_TABLE <> '{{ table }}'){% endfor %})
{%- endif %}
    ) AS clashes;
    IF v_clash IS NOT NULL THEN
        SET v_message = LEFT(CONCAT('the ', v_clash, ' is not the package''s; nothing changed but `{{ p.install.probe }}` left'), {{ p.errors.message_length }});
        SIGNAL SQLSTATE '{{ p.errors.sqlstate }}' SET MYSQL_ERRNO = {{ p.errors.install_refused }}, MESSAGE_TEXT = v_message;
    END IF;
{%- if creates_routines %}
    -- Refuses tables made for shorter names than these routines take, which
    -- would cut or refuse (1406) the longer ones; the slot table named first.
    SELECT SUBSTRING_INDEX(GROUP_CONCAT(CONCAT('table `', TABLE_NAME, '` holds names of ', CHARACTER_MAXIMUM_LENGTH,
                                               ' characters, not {{ p.types.name_length }}: generate with --name-length ',
                                               CHARACTER_MAXIMUM_LENGTH, ' or widen it')
                                        ORDER BY TABLE_NAME <> '{{ p.names.table }}', TABLE_NAME SEPARATOR '|'), '|', 1)
      INTO v_clash
      FROM information_schema.COLUMNS
     WHERE TABLE_SCHEMA = DATABASE() AND COLUMN_NAME = 'counter_name' AND CHARACTER_MAXIMUM_LENGTH < {{ p.types.name_length }}
       AND TABLE_NAME IN ({% for relation in p.install.relations %}{% if !relation.is_view %}{% if !loop.first %}, {% endif %}'{{ relation.name }}'{% endif %}{% endfor %});
    IF v_clash IS NOT NULL THEN
        SET v_message = LEFT(CONCAT('the ', v_clash, '; nothing changed'), {{ p.errors.message_length }});
        SIGNAL SQLSTATE '{{ p.errors.sqlstate }}' SET MYSQL_ERRNO = {{ p.errors.install_refused }}, MESSAGE_TEXT = v_message;
    END IF;
{%- endif %}
{%- if !p.install.lacked_features.is_empty() %}
    -- Refuses when the installed package has features this one lacks, as its
    -- {{ p.routine(Routine::Package) }}() says, or else as its routines' names show.
    BEGIN
        DECLARE CONTINUE HANDLER FOR SQLEXCEPTION SET v_installed = NULL;
        SET v_installed = `{{ p.routine(Routine::Package) }}`();
    END;
    IF v_installed LIKE '{{ p.install.routine_mark }} %' THEN
        SET v_installed = IF(v_installed LIKE '% --features %',
                             SUBSTRING_INDEX(SUBSTRING(v_installed, LOCATE(' --features ', v_installed) + 12), ' ', 1),
                             '{{ p.install.every_feature }}');
        SET v_lacking = CONCAT_WS(','{% for feature in p.install.lacked_features %},
            IF(FIND_IN_SET('{{ feature }}', v_installed){% if creates_routines %} AND NOT FIND_IN_SET('{{ feature }}', COALESCE({{ p.install.drop_features_variable }}, '')){% endif %}, '{{ feature }}', NULL){% endfor %});
    ELSE
        SELECT CONCAT('of `', MIN(ROUTINE_NAME), '`') INTO v_lacking FROM information_schema.ROUTINES
         WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_COMMENT LIKE '{{ p.install.routine_mark }}%'
           AND ROUTINE_NAME LIKE '{{ p.install.prefix_pattern }}%' ESCAPE '!'
           AND ROUTINE_NAME NOT IN ({% for routine in p.routines %}'{{ routine.name }}', {% endfor %}'{{ p.install.grants_keeper }}', '{{ p.install.probe }}')
{%- if creates_routines %}
           AND COALESCE({{ p.install.drop_features_variable }}, '') = ''
{%- endif %};
    END IF;
    IF v_lacking <> '' THEN
{%- if creates_routines %}
        SET v_message = LEFT(CONCAT('{{ refusals::LACKS_INSTALLED }} ', v_lacking, ' (install --drop-features drops them)'), {{ p.errors.message_length }});
{%- else %}
        SET v_message = LEFT(CONCAT('{{ refusals::UNINSTALL_LACKS_INSTALLED }} ', v_lacking, ': run its own uninstall.sql'), {{ p.errors.message_length }});
{%- endif %}
        SIGNAL SQLSTATE '{{ p.errors.sqlstate }}' SET MYSQL_ERRNO = {{ p.errors.install_refused }}, MESSAGE_TEXT = v_message;
    END IF;
{%- endif %}
{%- if creates_routines %}
    -- MySQL: returns the grants on the routines, which their DROP revokes, to
    -- be given back; refuses to replace routines whose grants it cannot read.
    /*!80000 BEGIN
        DECLARE v_unread BOOLEAN DEFAULT FALSE;
        BEGIN
            DECLARE CONTINUE HANDLER FOR SQLEXCEPTION SET v_unread = TRUE;
            SELECT JSON_ARRAYAGG(JSON_OBJECT('routine', `Routine_name`, 'kind', `Routine_type`, 'privileges', `Proc_priv`,
                                             'account', CONCAT(QUOTE(`User`), '@', QUOTE(`Host`))))
              INTO v_grants
              FROM mysql.procs_priv
             WHERE `Db` = DATABASE()
               AND `Routine_name` IN ({% for routine in p.routines %}{% if !loop.first %}, {% endif %}'{{ routine.name }}'{% endfor %});
        END;
        IF v_unread AND EXISTS (SELECT 1 FROM information_schema.ROUTINES
            WHERE ROUTINE_SCHEMA = DATABASE()
              AND ROUTINE_NAME IN ({% for routine in p.routines %}{% if !loop.first %}, {% endif %}'{{ routine.name }}'{% endfor %})) THEN
            SET v_message = LEFT('{{ refusals::GRANTS_UNREAD }}; nothing changed but `{{ p.install.probe }}` left', {{ p.errors.message_length }});
            SIGNAL SQLSTATE '{{ p.errors.sqlstate }}' SET MYSQL_ERRNO = {{ p.errors.install_refused }}, MESSAGE_TEXT = v_message;
        END IF;
    END; */
{%- endif %}
    RETURN v_grants;
END$$
DELIMITER ;
SET @slotted_counters_grants = `{{ p.install.probe }}`();
DROP FUNCTION `{{ p.install.probe }}`;
{%- if let Some(members) = p.slots.group_members %}
-- The routines read the member's rank from this table as their definer: a
-- server without it (MariaDB) or an account that may not read it stops here.
DO (SELECT COUNT(*) FROM {{ members }});
{%- endif %}
