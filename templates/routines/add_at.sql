{%- import "_macros.sql" as m -%}
{%- import "routines/_add.sql" as add -%}
{%- import "routines/_periods.sql" as periods -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::AddAt) }}` */$$
-- A late write (a replay, a backfill): {{ p.routine(Routine::Add) }}, counting p_delta in
-- the buckets that hold p_at (UTC, not after now) of each period the counter
-- tracks that still keeps one so old.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::AddAt) }}`(
    IN p_name {{ p.types.name_type }},
    IN p_delta {{ p.types.number_type }},
    IN p_at {{ p.types.moment_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_moment DATETIME(6);
{%- call add::variables(p, true) %}{% endcall %}
{% call add::check_arguments(p) %}{% endcall %}
{% call periods::check_at("    ", p, true) %}{% endcall %}
{%- call add::add_counted(p, "v_moment") %}{% endcall %}
END$$
