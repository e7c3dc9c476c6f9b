{#- What every counter_reset body shares: how it is dropped and described,
    its signature, and the check of the name. -#}
{%- import "_macros.sql" as m -%}

{% macro drop_and_describe(p) -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.reset }}` */$$
-- Sets counter p_name to p_value (NULL: 0), kept in slot 1, every other slot
-- to 0, and its start date to now when p_reset_start_date is TRUE.
{%- endmacro %}

{% macro signature(p) -%}
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.reset }}`(
    IN p_name {{ p.name_type }},
    IN p_value BIGINT,
    IN p_reset_start_date BOOLEAN
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_message {{ p.message_type }};

{% call m::check_name_length("    ", p) %}{% endcall %}
{%- endmacro %}
