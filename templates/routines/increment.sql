{%- import "routines/_add.sql" as add -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::Increment) }}` */$$
-- Adds 1 to counter p_name: {{ p.routine(Routine::Add) }}'s write, with no delta to parse.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::Increment) }}`(
    IN p_name {{ p.types.name_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
{%- call add::variables(p, false) %}{% endcall %}
{% call add::check_name(p, true) %}{% endcall %}
{%- call add::add_counted(p, "UTC_TIMESTAMP(6)", true) %}{% endcall %}
END$$
