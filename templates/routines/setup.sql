{%- import "_macros.sql" as m -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::Setup) }}` */$$
{%- if let Some(slots) = p.slots.fixed %}
-- Creates counter p_name with {{ slots }} slot rows (p_slots: NULL or {{ slots }}),
-- p_initial_value (NULL: 0; at most {{ p.slots.bound }} either way) in slot 1.
{%- else %}
-- Creates counter p_name with p_slots slot rows (NULL: {{ p.slots.default }}; at most {{ p.slots.max }}),
-- p_initial_value (NULL: 0; at most {{ p.slots.bound }} either way) in slot 1.
{%- endif %}
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::Setup) }}`(
    IN p_name {{ p.types.name_type }},
    IN p_description {{ p.types.description_type }},
    IN p_slots {{ p.types.number_type }},
    IN p_initial_value {{ p.types.number_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_slots INT;
    DECLARE v_number DECIMAL(65, 30);
    DECLARE v_initial_value BIGINT;
    DECLARE v_message {{ p.types.message_type }};
    -- The primary key settles concurrent setups of one name: 1062 becomes {{ p.errors.already_exists }}.
    DECLARE EXIT HANDLER FOR 1062
    BEGIN
{% call m::refuse("        ", p, p.errors.already_exists) %}'{{ refusals::ALREADY_EXISTS }}: ', QUOTE(p_name){% endcall %}
    END;

{% call m::check_name("    ", p) %}{% endcall %}
{%- call m::check_counter_limit("    ", p) %}{% endcall %}
    IF CHAR_LENGTH(p_description) > {{ p.types.description_length }} THEN
{% call m::refuse("        ", p, p.errors.invalid_argument) %}'{{ refusals::long_description(*p.types.description_length) }}{{ refusals::FOR_COUNTER }}: ', QUOTE(p_name){% endcall %}
    END IF;
{% call m::read_number("    ", p, "p_slots", "v_number") %}{% endcall %}
{%- if let Some(slots) = p.slots.fixed %}
    IF p_slots IS NOT NULL AND NOT COALESCE(v_number = {{ slots }}, FALSE) THEN
{% call m::refuse("        ", p, p.errors.invalid_argument) %}'{{ refusals::slots_not_fixed(**slots) }} ', {% call m::number_text("p_slots", "v_number") %}{% endcall %}, '{{ refusals::FOR_COUNTER }}: ', QUOTE(p_name){% endcall %}
    END IF;
    SET v_slots = {{ slots }};
{%- else %}
    IF p_slots IS NOT NULL AND NOT COALESCE(v_number = TRUNCATE(v_number, 0) AND v_number BETWEEN 1 AND {{ p.slots.max }}, FALSE) THEN
{% call m::refuse("        ", p, p.errors.invalid_argument) %}'{{ refusals::slots_out_of_range(*p.slots.max) }} ', {% call m::number_text("p_slots", "v_number") %}{% endcall %}, '{{ refusals::FOR_COUNTER }}: ', QUOTE(p_name){% endcall %}
    END IF;
    SET v_slots = COALESCE(v_number, {{ p.slots.default }});
{%- endif %}
{% call m::read_number("    ", p, "p_initial_value", "v_number") %}{% endcall %}
    IF p_initial_value IS NOT NULL AND NOT {% call m::is_bigint("v_number") %}{% endcall %} THEN
{% call m::refuse("        ", p, p.errors.invalid_argument) %}'initial value must be an integer, for counter: ', QUOTE(p_name){% endcall %}
    END IF;
    SET v_initial_value = COALESCE(v_number, 0);
{%- if !p.has.slot_bound_triggers %}
{% call m::check_slot_bound("    ", p, "v_initial_value") %}{% endcall %}
{%- endif %}
{%- if !p.names.counter_rows_tables.is_empty() %}
    -- Rows left by a delete cut short: no new counter inherits them.
    IF {% call m::rows_left_beside_slots("    ", p) %}{% endcall %} THEN
{% call m::refuse("        ", p, p.errors.already_exists) %}'{{ refusals::DELETE_UNFINISHED }}: ', QUOTE(p_name){% endcall %}
    END IF;
{%- endif %}

    -- One INSERT makes every slot, numbered by a join of digits: JSON_TABLE is
    -- unsafe for statement-based logging (1592).
{% call m::slot_rows("    ", p, "slot.id", "p_description, NOW(), IF(slot.id = 1, v_initial_value, 0)", "v_slots", "") %}{% endcall %}
END$$
