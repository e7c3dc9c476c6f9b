{%- import "_macros.sql" as m -%}
{%- import "routines/_add.sql" as add -%}
{%- import "routines/_periods.sql" as periods -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::AddAt) }}` */$$
-- A late write: adds p_delta to counter p_name as {{ p.routine(Routine::Add) }} does, and to the
-- bucket that holds p_at (a UTC time, no later than now) of each period the
-- counter tracks, unless that period keeps no bucket so old. For events
-- replayed from a queue, or a backfill.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::AddAt) }}`(
    IN p_name {{ p.name_type }},
    IN p_delta {{ p.number_type }},
    IN p_at {{ p.moment_type }}
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
