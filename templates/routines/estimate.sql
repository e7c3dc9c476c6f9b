{%- import "_macros.sql" as m -%}
/*!80000 DROP FUNCTION IF EXISTS `{{ p.routine(Routine::Estimate) }}` */$$
-- Estimates counter p_name from one random slot times the slot count (NULL:
-- no such counter); a value kept in slot 1 (initial, reset, compact) skews it.
CREATE /*M! OR REPLACE */ FUNCTION `{{ p.routine(Routine::Estimate) }}`(
    p_name {{ p.types.name_type }}
)
RETURNS BIGINT
NOT DETERMINISTIC
READS SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_slots INT;
    DECLARE v_slot INT;
    DECLARE v_value BIGINT;
{%- if p.slots.fixed.is_none() %}
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_slots = NULL;
{%- endif %}
{% call m::null_if_unusable(p) %}{% endcall %}
{%- if let Some(slots) = p.slots.fixed %}
    SET v_slots = {{ slots }};
    IF NOT EXISTS (SELECT 1 FROM `{{ p.names.table }}` WHERE `counter_name` = p_name) THEN
        RETURN NULL;
    END IF;
{%- else %}
    SELECT `counter_id` INTO v_slots FROM `{{ p.names.table }}` WHERE `counter_name` = p_name
     ORDER BY `counter_id` DESC LIMIT 1;
    IF v_slots IS NULL THEN
        RETURN NULL;
    END IF;
{%- endif %}
    SET v_slot = FLOOR(RAND() * v_slots) + 1;
    SELECT MAX(`counter`) INTO v_value FROM `{{ p.names.table }}` WHERE `counter_name` = p_name AND `counter_id` = v_slot;
    RETURN COALESCE(v_value, 0) * v_slots;
END$$
