/*!80000 DROP FUNCTION IF EXISTS `{{ p.routine(Routine::UtcOffset) }}` */$$
-- Where counter p_name's buckets of p_period start, in minutes east of UTC
-- (480: midnight at +08:00); NULL when the counter does not track p_period.
CREATE /*M! OR REPLACE */ FUNCTION `{{ p.routine(Routine::UtcOffset) }}`(
    p_name {{ p.types.name_type }},
    p_period {{ p.types.name_type }}
)
RETURNS INT
NOT DETERMINISTIC
READS SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    RETURN (SELECT `utc_offset` FROM `{{ p.names.periods_table }}`
             WHERE `counter_name` = p_name AND `period` = p_period);
END$$
