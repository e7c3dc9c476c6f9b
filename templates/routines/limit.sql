{%- import "_macros.sql" as m -%}
{%- import "routines/_periods.sql" as periods -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::Limit) }}` */$$
-- Limits each bucket of p_period ({% for period in p.periods.all %}{% if loop.last %} or {% else if !loop.first %}, {% endif %}'{{ period.name() }}'{% endfor %}) of
-- counter p_name to p_highest, a whole number from 0 (NULL: no limit),
-- tracking the period (every bucket kept) if it is not. A write past the
-- limit is refused ({{ p.errors.past_bound }}) and changes nothing; a negative write gives room
-- back. A reset changes no bucket, so no quota.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::Limit) }}`(
    IN p_name {{ p.types.name_type }},
    IN p_period {{ p.types.name_type }},
    IN p_highest {{ p.types.number_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_message {{ p.types.message_type }};
    DECLARE v_number DECIMAL(65, 30);

{% call m::check_name_form("    ", p) %}{% endcall %}
{% call periods::check_period("    ", p) %}{% endcall %}
{% call m::read_number("    ", p, "p_highest", "v_number") %}{% endcall %}
    IF p_highest IS NOT NULL AND NOT COALESCE(v_number = TRUNCATE(v_number, 0) AND v_number BETWEEN 0 AND {{ p.periods.largest_limit }}, FALSE) THEN
{% call m::refuse("        ", p, p.errors.invalid_argument) %}'{{ refusals::limit_out_of_range(*p.periods.largest_limit) }} ', {% call m::number_text("p_highest", "v_number") %}{% endcall %}, '{{ refusals::FOR_COUNTER }}: ', QUOTE(p_name){% endcall %}
    END IF;
    IF NOT EXISTS (SELECT 1 FROM `{{ p.names.table }}` WHERE `counter_name` = p_name) THEN
{% call m::unknown_counter("        ", p) %}{% endcall %}
    END IF;
    IF p_highest IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM `{{ p.names.periods_table }}` WHERE `counter_name` = p_name AND `period` = p_period) THEN
        CALL `{{ p.routine(Routine::Track) }}`(p_name, p_period, NULL);
    END IF;
    -- The new limit; the old one's shares go, for the next writes to share.
    UPDATE `{{ p.names.periods_table }}` SET `highest` = v_number
     WHERE `counter_name` = p_name AND `period` = p_period;
    UPDATE `{{ p.names.buckets_table }}` SET `highest` = NULL
     WHERE `counter_name` = p_name AND `period` = p_period AND `highest` IS NOT NULL;
END$$
