/*!80000 DROP PROCEDURE IF EXISTS `{{ p.increment }}` */$$
-- Adds 1 to counter p_name.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.increment }}`(
    IN p_name {{ p.name_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    CALL `{{ p.add }}`(p_name, 1);
END$$
