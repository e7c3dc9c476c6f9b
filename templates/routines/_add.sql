{#- What counter_add and counter_add_once share: their variables, and the
    checks of the delta and the name. -#}
{%- import "_macros.sql" as m -%}

{% macro variables(p) %}
{%- if p.fixed_slots.is_none() %}
    DECLARE v_slots INT;
{%- endif %}
    DECLARE v_slot INT;
{%- if p.fixed_slots.is_none() %}
{% call m::declare_slot_count("    ") %}{% endcall %}
{%- endif %}
    DECLARE v_delta BIGINT;
{%- call m::declare_position("    ", p) %}{% endcall %}
    DECLARE v_message {{ p.message_type }};
{%- if p.fixed_slots.is_none() %}
    -- An unknown counter leaves v_slots NULL; no "No data" warning.
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_slots = NULL;
{%- endif %}
{%- endmacro %}

{% macro check_arguments(p) %}
{% call m::check_delta("    ", p) %}{% endcall %}
{%- if p.auto_create %}
{% call m::check_name("    ", p) %}{% endcall %}
{%- else %}
{% call m::check_name_form("    ", p) %}{% endcall %}
{%- endif %}
{%- endmacro %}
