{%- import "_macros.sql" as m -%}
{%- import "routines/_add_many.sql" as batch -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::AddManyOnce) }}` */$$
-- {{ p.routine(Routine::AddMany) }} with a write id p_write_id: applies the batch p_deltas
-- once, however often it is called with that id within the package's
-- window, as {{ p.routine(Routine::AddOnce) }} does for one delta. Every name and delta is
-- checked, and each counter's slot picked, as {{ p.routine(Routine::AddMany) }} does; then one
-- statement records the id and applies every delta, counter by counter in
-- the order of their names. It opens no transaction.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::AddManyOnce) }}`(
    IN p_write_id VARBINARY(64),
    IN p_deltas {{ p.deltas_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
{%- call batch::planned(p) %}{% endcall %}
{% call m::check_write_id("    ", p) %}{% endcall %}
{% call m::record_write("    ", p, "''", "v_plan", true, "NULL") %}{% endcall %}
{% call m::forget_expired_writes("    ", p) %}{% endcall %}
END$$
