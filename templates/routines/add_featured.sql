{%- import "routines/_add.sql" as add -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::AddFeatured) }}` */$$
-- The write of {{ p.routine(Routine::Add) }}, {{ p.routine(Routine::Increment) }} and {{ p.routine(Routine::AddAt) }} when their
-- UPDATE changed no row: p_delta to slot p_slot {% if let Some(slots) = p.slots.fixed %}(p_slots: always {{ slots }}, unread){% else %}of p_slots{% endif %},
-- or as the bound asks, and to the buckets of p_at within their limits.
-- Called with the callers' definer's rights: no application is granted it.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::AddFeatured) }}`(
    IN p_name {{ p.types.name_type }},
    IN p_slot INT,
    IN p_slots INT,
    IN p_delta BIGINT,
    IN p_at DATETIME(6)
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    -- Under the callers' variable names: the code below is theirs too.
    DECLARE v_slot INT DEFAULT p_slot;
{%- if p.slots.fixed.is_none() %}
    DECLARE v_slots INT DEFAULT p_slots;
{%- endif %}
    DECLARE v_delta BIGINT DEFAULT p_delta;
    DECLARE v_message {{ p.types.message_type }};
{%- call add::tracked_or_not(p, "p_at", "    ") %}{% endcall %}
END$$
