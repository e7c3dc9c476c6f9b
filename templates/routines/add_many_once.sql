{%- import "_macros.sql" as m -%}
{%- import "routines/_add_many.sql" as batch -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::AddManyOnce) }}` */$$
-- {{ p.routine(Routine::AddMany) }} with a write id: applies p_deltas once, however often
-- it is called with p_write_id within the window, as {{ p.routine(Routine::AddOnce) }} does.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::AddManyOnce) }}`(
    IN p_write_id VARBINARY(64),
    IN p_deltas {{ p.types.deltas_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
{%- call batch::planned(p) %}{% endcall %}
{% call m::check_write_id("    ", p) %}{% endcall %}
{% call m::record_write("    ", p, "''", "v_plan", true, "NULL") %}{% endcall %}
{% call m::forget_expired_writes("    ", p) %}{% endcall %}
END$$
