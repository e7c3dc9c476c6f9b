/*!80000 DROP FUNCTION IF EXISTS `{{ p.routine(Routine::ParseNumber) }}` */$$
-- The number p_text writes (up to 25 digits before the point and 30 after,
-- maybe an exponent digit: '1e5'), else NULL. Numbers come as text so that a
-- non-strict session cannot read 'abc' as 0, or round a fraction.
CREATE /*M! OR REPLACE */ FUNCTION `{{ p.routine(Routine::ParseNumber) }}`(
    p_text {{ p.types.number_type }}
)
RETURNS DECIMAL(65, 30)
DETERMINISTIC
NO SQL
COMMENT '{{ p.comment }}'
BEGIN
    -- CAST only a number: in a function MySQL makes warning 1292 an error.
    IF p_text REGEXP '^[+-]?([0-9]{1,25}([.][0-9]{0,30})?|[.][0-9]{1,30})([eE][+]?[0-9])? *$' THEN
        RETURN CAST(p_text AS DECIMAL(65, 30));
    END IF;
    RETURN NULL;
END$$
