/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::Spread) }}` */$$
-- Writes p_value, a bounded counter's checked new total, evenly over slots 1
-- to p_slots of counter p_name (locked by the caller), each with an even share
-- of the room toward p_floor and p_ceiling (NULL: none), by floor division.
-- Called with the callers' definer's rights: no application is granted it.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::Spread) }}`(
    IN p_name {{ p.types.name_type }},
    IN p_slots INT,
    IN p_value DECIMAL(20, 0),
    IN p_floor BIGINT,
    IN p_ceiling BIGINT
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_share_left BIGINT DEFAULT MOD(MOD(p_value, p_slots) + p_slots, p_slots);
    DECLARE v_share BIGINT DEFAULT (p_value - v_share_left) DIV p_slots;
    DECLARE v_floor_room_left BIGINT DEFAULT MOD(p_value - p_floor, p_slots);
    DECLARE v_floor_room BIGINT DEFAULT (p_value - p_floor - v_floor_room_left) DIV p_slots;
    DECLARE v_ceiling_room_left BIGINT DEFAULT MOD(p_ceiling - p_value, p_slots);
    DECLARE v_ceiling_room BIGINT DEFAULT (p_ceiling - p_value - v_ceiling_room_left) DIV p_slots;
{%- if p.has.auto_create %}
    -- A lazy counter's missing slots are created: each holds a share.
    INSERT INTO `{{ p.names.table }}` (`counter_name`, `counter_id`, `description`, `start_date`, `counter`)
    WITH digit (d) AS ({{ p.slots.numbers.digits }})
    SELECT p_name, slot.id, NULL, NOW(), 0
    FROM (SELECT {{ p.slots.numbers.number }} AS id FROM {{ p.slots.numbers.tables }}) AS slot
    WHERE slot.id <= p_slots
    ON DUPLICATE KEY UPDATE `counter_id` = `counter_id`;
{%- endif %}
    UPDATE `{{ p.names.table }}` FORCE INDEX (PRIMARY)
       SET `counter` = v_share + (`counter_id` <= v_share_left),
           `lowest` = v_share + (`counter_id` <= v_share_left) - v_floor_room - (`counter_id` <= v_floor_room_left),
           `highest` = v_share + (`counter_id` <= v_share_left) + v_ceiling_room + (`counter_id` <= v_ceiling_room_left)
     WHERE `counter_name` = p_name;
END$$
