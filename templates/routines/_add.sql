{#- What counter_add, counter_add_at and counter_add_once share: their
    variables, the checks of the delta and the name, and the write. -#}
{%- import "_macros.sql" as m -%}
{%- import "routines/_bounds.sql" as bounds -%}
{%- import "routines/_periods.sql" as periods -%}

{#- `parses_delta`: the delta comes as text, parsed through v_number;
    else it is 1. `classic`: the routine tries the classic write. -#}
{% macro variables(p, parses_delta, classic = true) %}
{%- if p.slots.fixed.is_none() %}
    DECLARE v_slots INT;
{%- endif %}
    DECLARE v_slot INT;
{%- if p.slots.fixed.is_none() %}
{% call m::declare_slot_count("    ") %}{% endcall %}
{%- endif %}
{%- if p.classic_flag && classic && p.has.periods %}
    DECLARE v_untracked BOOLEAN DEFAULT FALSE;
{%- endif %}
{%- if p.classic_flag && p.has.bounds %}
    DECLARE v_bounded BOOLEAN DEFAULT FALSE;
{%- endif %}
{%- if parses_delta %}
    DECLARE v_number DECIMAL(65, 30);
{%- endif %}
{%- if parses_delta %}
    DECLARE v_delta BIGINT;
{%- else %}
    DECLARE v_delta BIGINT DEFAULT 1;
{%- endif %}
{%- call m::declare_position("    ", p) %}{% endcall %}
    DECLARE v_message {{ p.types.message_type }};
{%- if p.slots.fixed.is_none() %}
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_slots = NULL;
{%- endif %}
{%- endmacro %}

{% macro check_arguments(p, hot = false) %}
{% call m::check_delta("    ", p, hot) %}{% endcall %}
{% call check_name(p, hot) %}{% endcall %}
{%- endmacro %}

{#- The name a write may count for: with --auto-create it makes the
    counter, so it must be one a counter may have. On the `hot` path of a
    package whose names compare in a binary collation, checked after the
    write found no row instead (add_counted). -#}
{% macro check_name(p, hot = false) %}
{%- if p.has.auto_create %}
{% call m::check_name("    ", p) %}{% endcall %}
{%- else if hot && p.defers_name_check %}
{%- else %}
{% call m::check_name_form("    ", p) %}{% endcall %}
{%- endif %}
{%- endmacro %}

{#- Adds v_delta to one slot of counter p_name, counted in the buckets of
    time `at`. -#}
{% macro add_counted(p, at, hot = false) %}
{%- let defer = hot && p.defers_name_check %}
{%- if p.slots.fixed.is_none() %}
{% call m::read_slot_count("    ", p, "v_slots", p.classic_flag && p.has.periods, p.classic_flag && p.has.bounds, defer) %}{% endcall %}
{%- endif %}
{%- call m::find_position("    ", p) %}{% endcall %}
{% call m::pick_slot("    ", p) %}{% endcall %}
{%- call m::check_counter_limit("    ", p) %}{% endcall %}
{%- if p.classic_flag %}
{%- if p.has.bounds %}
{% call bounds::look_before_locking("    ", p) %}{% endcall %}
{%- endif %}
    -- One UPDATE if the counter tracks no period and its slot can take it.
{%- if p.has.periods %}
    IF v_untracked THEN
{%- call slot_update(p, "        ", "`untracked` AND ", defer) %}{% endcall %}
    END IF;
    IF NOT v_untracked OR ROW_COUNT() = 0 THEN
{%- else %}
{%- call slot_update(p, "    ", "", defer) %}{% endcall %}
    IF ROW_COUNT() = 0 THEN
{%- endif %}
{%- if defer %}
{% call m::deferred_name_check(p, "        ") %}{% endcall %}
{%- endif %}
{%- call featured(p, at, "        ", false, true) %}{% endcall %}
    END IF;
{%- else if (p.has.periods || p.has.bounds) && !p.has.auto_create %}
    -- One UPDATE if the counter has no period and no bound.
{%- call classic_update(p, "    ", defer) %}{% endcall %}
    IF ROW_COUNT() = 0 THEN
{%- if defer %}
{% call m::deferred_name_check(p, "        ") %}{% endcall %}
{%- endif %}
{%- call featured(p, at, "        ") %}{% endcall %}
    END IF;
{%- else %}
{%- call featured(p, at, "    ", defer) %}{% endcall %}
{%- endif %}
{%- endmacro %}

{#- The write of a counter that tracks no period, where the slot count's
    read said so: v_delta added to slot v_slot of counter p_name (the one
    the look at a bound left) in one UPDATE, which changes no row unless
    `untracked` (SQL, empty or ending in AND) holds and the slot takes the
    delta alone (`fits`). -#}
{% macro slot_update(p, indent, untracked, skips_padded) %}
{{ indent }}UPDATE `{{ p.names.table }}` SET `counter` = `counter` + v_delta
{{ indent }} WHERE `counter_name` = p_name AND `counter_id` = v_slot
{%- if skips_padded %}
{{ indent }}   AND p_name NOT LIKE '% '
{%- endif %}
{{ indent }}   AND {{ untracked }}{% call bounds::fits(p, "v_delta", p.slots.count) %}{% endcall %};
{%- endmacro %}

{#- The classic write of a package with fixed slots, which reads no slot
    row before it: v_delta added to slot v_slot of counter p_name, in one
    UPDATE that changes no row unless the counter takes it
    (takes_classic_write) within the slot bound. -#}
{% macro classic_update(p, indent, skips_padded = false) %}
{{ indent }}UPDATE `{{ p.names.table }}` SET `counter` = `counter` + v_delta
{{ indent }} WHERE `counter_name` = p_name AND `counter_id` = v_slot
{%- if skips_padded %}
{{ indent }}   AND p_name NOT LIKE '% '
{%- endif %}
{{ indent }}   AND {% call m::takes_classic_write(p) %}{% endcall %}
{{ indent }}   AND {% call bounds::within_slot_bound(p, "v_delta") %}{% endcall %};
{%- endmacro %}

{#- Adds v_delta to slot v_slot of counter p_name, or to the counter as
    its bound, its periods and their limits ask, at `indent`; `looked`:
    a bounded counter's slot was looked at already. -#}
{% macro featured(p, at, indent, defer = false, looked = false) %}
{%- if p.has.bounds && !p.has.auto_create && !looked %}
{% call bounds::look_before_locking(indent, p) %}{% endcall %}
{%- endif %}
{%- if p.has.add_featured %}
{{ indent }}CALL `{{ p.routine(Routine::AddFeatured) }}`(p_name, v_slot, {{ p.slots.count }}, v_delta, {{ at }});
{%- else %}
{%- call tracked_or_not(p, at, indent, defer) %}{% endcall %}
{%- endif %}
{%- endmacro %}

{#- The write of `featured` past the look at a bound: to the buckets of
    time `at` of each period the counter tracks, or to its slot. -#}
{% macro tracked_or_not(p, at, indent, defer = false) %}
{%- if p.has.periods %}
{{ indent }}BEGIN
{%- call periods::declare_keeps(indent ~ "    ", p, true) %}{% endcall %}
{%- call periods::read_keeps(indent ~ "    ", p, false) %}{% endcall %}
{{ indent }}    IF {% call periods::tracks_any(p) %}{% endcall %} THEN
{% call periods::look_at_limits(indent ~ "        ", p, at) %}{% endcall %}
{% call periods::record_tracked_write(indent ~ "        ", p, at) %}{% endcall %}
{{ indent }}    ELSE
{%- call bounds::add_to_slot(indent ~ "        ", p) %}{% endcall %}
{{ indent }}    END IF;
{{ indent }}END;
{%- else %}
{%- call bounds::add_to_slot(indent, p, false, defer) %}{% endcall %}
{%- endif %}
{%- endmacro %}
