{%- import "routines/_add.sql" as add -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::AddFeatured) }}` */$$
-- The write of {{ p.routine(Routine::Add) }}, {{ p.routine(Routine::Increment) }} and {{ p.routine(Routine::AddAt) }} when the classic one
-- changed no row: p_delta to slot p_slot of counter p_name, or to the
-- counter as its bound asks, and to the bucket that holds p_at of each
-- period it tracks, within their limits. p_slots is the counter's slot count.
{%- if let Some(slots) = p.fixed_slots %}
-- In this package that is always {{ slots }}, and goes unread: it is passed so
-- that the routine takes the same arguments in every package.
{%- endif %}
-- Written once for the three callers, which call it with their definer's
-- rights; no application is granted it.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::AddFeatured) }}`(
    IN p_name {{ p.name_type }},
    IN p_slot INT,
    IN p_slots INT,
    IN p_delta BIGINT,
    IN p_at DATETIME(6)
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    -- Named like the callers' variables, so the shared parts apply.
    DECLARE v_slot INT DEFAULT p_slot;
{%- if p.fixed_slots.is_none() %}
    DECLARE v_slots INT DEFAULT p_slots;
{%- endif %}
    DECLARE v_delta BIGINT DEFAULT p_delta;
    DECLARE v_message {{ p.message_type }};
{%- call add::tracked_or_not(p, "p_at", "    ") %}{% endcall %}
END$$
