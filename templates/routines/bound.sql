{%- import "_macros.sql" as m -%}
{%- import "routines/_bounds.sql" as bounds -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::Bound) }}` */$$
-- Bounds counter p_name's total to [p_lowest, p_highest] (NULL: none on that
-- side; both NULL: unbounded); 9003 if the total is outside. Writes past a
-- bound then fail with {{ p.errors.past_bound }}. Each slot holds an even share of the room: a
-- write its slot can take changes that slot alone; any other locks every
-- slot and spreads the total again ({{ p.names.spread_trigger }}).
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::Bound) }}`(
    IN p_name {{ p.types.name_type }},
    IN p_lowest {{ p.types.number_type }},
    IN p_highest {{ p.types.number_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_message {{ p.types.message_type }};
    DECLARE v_lowest DECIMAL(65, 30);
    DECLARE v_highest DECIMAL(65, 30);

{% call m::check_name_form("    ", p) %}{% endcall %}
{% call m::read_number("    ", p, "p_lowest", "v_lowest") %}{% endcall %}
{% call m::read_number("    ", p, "p_highest", "v_highest") %}{% endcall %}
    IF p_lowest IS NOT NULL AND NOT COALESCE(v_lowest = TRUNCATE(v_lowest, 0) AND v_lowest BETWEEN -{{ p.slots.bound }} AND {{ p.slots.bound }}, FALSE) THEN
{% call m::refuse("        ", p, p.errors.invalid_argument) %}'{{ refusals::bound_out_of_range(*p.slots.bound) }} ', {% call m::number_text("p_lowest", "v_lowest") %}{% endcall %}, '{{ refusals::FOR_COUNTER }}: ', QUOTE(p_name){% endcall %}
    END IF;
    IF p_highest IS NOT NULL AND NOT COALESCE(v_highest = TRUNCATE(v_highest, 0) AND v_highest BETWEEN -{{ p.slots.bound }} AND {{ p.slots.bound }}, FALSE) THEN
{% call m::refuse("        ", p, p.errors.invalid_argument) %}'{{ refusals::bound_out_of_range(*p.slots.bound) }} ', {% call m::number_text("p_highest", "v_highest") %}{% endcall %}, '{{ refusals::FOR_COUNTER }}: ', QUOTE(p_name){% endcall %}
    END IF;
    IF v_lowest > v_highest THEN
{% call m::refuse("        ", p, p.errors.invalid_argument) %}'{{ refusals::FLOOR_ABOVE_CEILING }} (', {% call m::number_text("p_lowest", "v_lowest") %}{% endcall %}, ' > ', {% call m::number_text("p_highest", "v_highest") %}{% endcall %}, '){{ refusals::FOR_COUNTER }}: ', QUOTE(p_name){% endcall %}
    END IF;
{% call bounds::make("    ", p, "bound", "NULL", "NULL", "v_lowest", "v_highest") %}{% endcall %}
END$$
