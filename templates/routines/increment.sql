/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::Increment) }}` */$$
-- Adds 1 to counter p_name.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::Increment) }}`(
    IN p_name {{ p.name_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    CALL `{{ p.routine(Routine::Add) }}`(p_name, 1);
END$$
