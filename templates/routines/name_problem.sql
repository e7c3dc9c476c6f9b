/*!80000 DROP FUNCTION IF EXISTS `{{ p.routine(Routine::NameProblem) }}` */$$
-- What makes p_name a name no counter may have, worded as the routines
-- refuse it, or NULL: more than {{ p.name_length }} characters (a session that is not
-- strict may have cut a longer one), a control character, a character the
-- collation ignores ("a" and "a" followed by U+200B would be one counter),
-- or a trailing space, which a PAD SPACE collation ignores too. The
-- routines ask it only of a name that is longer, ends in a space, or holds
-- a character outside printable ASCII, a quote or a backslash.
CREATE /*M! OR REPLACE */ FUNCTION `{{ p.routine(Routine::NameProblem) }}`(
    p_name {{ p.name_type }}
)
RETURNS VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin
DETERMINISTIC
NO SQL
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_at INT DEFAULT 0;
    DECLARE v_character VARCHAR(1) CHARACTER SET {{ p.charset }} COLLATE {{ p.collation }};
    DECLARE v_code INT;
    IF CHAR_LENGTH(p_name) > {{ p.name_length }} THEN
        RETURN '{{ refusals::long_name(*p.name_length) }}';
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
