{#- What counter_add, counter_add_at and counter_add_once share: their
    variables, the checks of the delta and the name, and the write. -#}
{%- import "_macros.sql" as m -%}
{%- import "routines/_bounds.sql" as bounds -%}
{%- import "routines/_periods.sql" as periods -%}

{#- `parses_delta`: the delta comes as text, parsed through v_number. -#}
{% macro variables(p, parses_delta) %}
{%- if p.fixed_slots.is_none() %}
    DECLARE v_slots INT;
{%- endif %}
    DECLARE v_slot INT;
{%- if p.fixed_slots.is_none() %}
{% call m::declare_slot_count("    ") %}{% endcall %}
{%- endif %}
{%- if parses_delta %}
    DECLARE v_number DECIMAL(65, 30);
{%- endif %}
    DECLARE v_delta BIGINT;
{%- if p.periods_feature %}
    -- What each period the counter tracks keeps.
{%- call periods::declare_keeps("    ", p) %}{% endcall %}
{%- endif %}
{%- call m::declare_position("    ", p) %}{% endcall %}
    DECLARE v_message {{ p.message_type }};
{%- if p.fixed_slots.is_none() %}
    -- An unknown counter leaves v_slots NULL; no "No data" warning.
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_slots = NULL;
{%- endif %}
{%- endmacro %}

{% macro check_arguments(p) %}
{% call m::check_delta("    ", p) %}{% endcall %}
{% call check_name(p) %}{% endcall %}
{%- endmacro %}

{#- The name a write may count for: with --auto-create it makes the
    counter, so it must be one a counter may have. -#}
{% macro check_name(p) %}
{%- if p.auto_create %}
{% call m::check_name("    ", p) %}{% endcall %}
{%- else %}
{% call m::check_name_form("    ", p) %}{% endcall %}
{%- endif %}
{%- endmacro %}

{#- Adds v_delta to one slot of counter p_name, counted in the buckets of
    time `at`. -#}
{% macro add_counted(p, at) %}
    -- The slot is computed once, into a variable: RAND() in a WHERE clause
    -- would be evaluated again for every row scanned. FLOOR, not rounding,
    -- gives every slot the same chance.
{%- if p.fixed_slots.is_none() %}
{% call m::read_slot_count("    ", p, "v_slots") %}{% endcall %}
{%- endif %}
{%- call m::find_position("    ", p) %}{% endcall %}
{% call m::pick_slot("    ", p) %}{% endcall %}
{%- call m::check_counter_limit("    ", p) %}{% endcall %}
{%- if p.periods_feature %}
{% call periods::read_keeps("    ", p, false) %}{% endcall %}
    IF {% call periods::tracks_any(p) %}{% endcall %} THEN
{% call periods::record_tracked_write("        ", p, at) %}{% endcall %}
    ELSE
{%- call bounds::add_to_slot("        ", p) %}{% endcall %}
    END IF;
{%- else %}
{%- call bounds::add_to_slot("    ", p) %}{% endcall %}
{%- endif %}
{%- endmacro %}
