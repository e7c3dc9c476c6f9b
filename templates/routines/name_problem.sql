/*!80000 DROP FUNCTION IF EXISTS `{{ p.routine(Routine::NameProblem) }}` */$$
-- Why p_name cannot name a counter, or NULL: over {{ p.types.name_length }} characters (a
-- non-strict session may have cut it), a control character, a character the
-- collation ignores (as U+200B), or a trailing space (PAD SPACE ignores it).
CREATE /*M! OR REPLACE */ FUNCTION `{{ p.routine(Routine::NameProblem) }}`(
    p_name {{ p.types.name_type }}
)
RETURNS VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin
DETERMINISTIC
NO SQL
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_at INT DEFAULT 0;
    DECLARE v_character VARCHAR(1) CHARACTER SET {{ p.types.charset }} COLLATE {{ p.types.collation }};
    DECLARE v_code INT;
    IF CHAR_LENGTH(p_name) > {{ p.types.name_length }} THEN
        RETURN '{{ refusals::long_name(*p.types.name_length) }}';
    END IF;
    WHILE v_at < CHAR_LENGTH(p_name) DO
        SET v_at = v_at + 1;
        SET v_character = SUBSTRING(p_name, v_at, 1);
        SET v_code = ORD(CONVERT(v_character USING utf32));
        IF v_code < 32 OR v_code BETWEEN 127 AND 159 THEN
            RETURN CONCAT('{{ refusals::NAME_HAS }} {{ refusals::CONTROL_CHARACTER }} (U+', LPAD(HEX(v_code), 4, '0'), ')');
        ELSEIF WEIGHT_STRING(v_character) = '' THEN
            RETURN CONCAT('{{ refusals::NAME_HAS }} {{ refusals::IGNORED_CHARACTER }} (U+', LPAD(HEX(v_code), 4, '0'), ')');
        END IF;
    END WHILE;
    RETURN IF(p_name LIKE '% ', '{{ refusals::NAME_HAS }} {{ refusals::TRAILING_SPACE }}', NULL);
END$$
