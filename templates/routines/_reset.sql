{#- What every counter_reset body shares: how it is dropped and described,
    its signature, and the checks of the name and the value. -#}
{%- import "_macros.sql" as m -%}

{% macro drop_and_describe(p) -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::Reset) }}` */$$
-- Sets counter p_name to p_value (NULL: 0; at most {{ p.slots.bound }}
-- either way) in slot 1, other slots 0; start date now if p_reset_start_date.
{%- if p.has.bounds %}
-- A bounded counter's value is refused past a bound (9004), else spread.
{%- endif %}
{%- endmacro %}

{% macro signature(p) -%}
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::Reset) }}`(
    IN p_name {{ p.types.name_type }},
    IN p_value {{ p.types.number_type }},
    IN p_reset_start_date BOOLEAN
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_number DECIMAL(65, 30);
    DECLARE v_value BIGINT;
    DECLARE v_message {{ p.types.message_type }};

{% call m::check_name_form("    ", p) %}{% endcall %}
{% call m::read_number("    ", p, "p_value", "v_number") %}{% endcall %}
    IF p_value IS NOT NULL AND NOT {% call m::is_bigint("v_number") %}{% endcall %} THEN
{% call m::refuse("        ", p, p.errors.invalid_argument) %}'value must be an integer, for counter: ', QUOTE(p_name){% endcall %}
    END IF;
    SET v_value = COALESCE(v_number, 0);
{%- endmacro %}
