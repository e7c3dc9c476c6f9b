/*!80000 DROP FUNCTION IF EXISTS `{{ p.routine(Routine::ParseNumber) }}` */$$
-- The number p_text writes, or NULL for NULL and for text that is none:
-- a decimal of at most 25 digits before the point and 30 after, perhaps
-- with a positive one-digit exponent ('1e5') and trailing spaces. Number
-- parameters are text, so that a session that is not strict cannot make
-- 'abc' 0, or round a fraction, before it is read.
CREATE /*M! OR REPLACE */ FUNCTION `{{ p.routine(Routine::ParseNumber) }}`(
    p_text {{ p.number_type }}
)
RETURNS DECIMAL(65, 30)
DETERMINISTIC
NO SQL
COMMENT '{{ p.comment }}'
BEGIN
    -- No CAST of text that may be no number: in a function MySQL makes its
    -- warning (1292) an error.
    IF p_text REGEXP '^[+-]?([0-9]{1,25}([.][0-9]{0,30})?|[.][0-9]{1,30})([eE][+]?[0-9])? *$' THEN
        RETURN CAST(p_text AS DECIMAL(65, 30));
    END IF;
    RETURN NULL;
END$$
