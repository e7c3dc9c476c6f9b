{%- import "_macros.sql" as m -%}
{%- import "routines/_add.sql" as add -%}
{%- import "routines/_bounds.sql" as bounds -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::AddOnce) }}` */$$
-- {{ p.routine(Routine::Add) }} with a write id p_write_id (16 random bytes): adds p_delta
-- once, however often called with that id within the window. After a lost
-- answer call again with the same id: a recorded id changes nothing, no error.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::AddOnce) }}`(
    IN p_write_id VARBINARY(64),
    IN p_name {{ p.types.name_type }},
    IN p_delta {{ p.types.number_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
{%- call add::variables(p, true, false) %}{% endcall %}

{% call m::check_write_id("    ", p) %}{% endcall %}
{%- call add::check_arguments(p) %}{% endcall %}
{%- if p.slots.fixed.is_none() %}
{% call m::read_slot_count("    ", p, "v_slots", false, p.classic_flag && p.has.bounds) %}{% endcall %}
    IF v_slots IS NULL THEN
{% call m::unknown_counter("        ", p) %}{% endcall %}
    END IF;
{%- endif %}
{%- call m::find_position("    ", p) %}{% endcall %}
{% call m::pick_slot("    ", p) %}{% endcall %}
{%- call m::check_counter_limit("    ", p) %}{% endcall %}
{%- if p.has.bounds && !p.has.auto_create %}
{% call bounds::look_before_locking("    ", p) %}{% endcall %}
{%- endif %}
{% call m::record_write("    ", p, "p_name", "CONCAT(HEX(p_name), ':', v_slot, ':', v_delta, ';')", true, "NULL") %}{% endcall %}
{% call m::forget_expired_writes("    ", p) %}{% endcall %}
END$$
