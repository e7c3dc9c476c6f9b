{%- import "_macros.sql" as m -%}
{%- import "routines/_add_many.sql" as batch -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.add_many_once }}` */$$
-- {{ p.add_many }} with a write id p_write_id: applies the batch p_deltas
-- once, however often it is called with that id within the package's
-- window, as {{ p.add_once }} does for one delta. Every name and delta is
-- checked, and each counter's slot picked, as {{ p.add_many }} does; then one
-- statement records the id and applies every delta, counter by counter in
-- the order of their names. It opens no transaction.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.add_many_once }}`(
    IN p_write_id VARBINARY(64),
    IN p_deltas {{ p.deltas_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
{%- call batch::check_variables(p) %}{% endcall %}
{%- if p.fixed_slots.is_none() %}
    DECLARE v_slots INT;
{%- endif %}
    DECLARE v_slot INT;
{%- call m::declare_position("    ", p) %}{% endcall %}
    DECLARE v_entries INT DEFAULT 0;
    -- The write's slots, `hex(name):slot:delta;` each.
    DECLARE v_plan {{ p.statement_type }} DEFAULT '';
{%- call batch::declare_parts(p, ["v_plan"]) %}{% endcall %}
{%- call batch::open_batch(p) %}{% endcall %}
{%- if p.auto_create %}
{% call m::check_name("            ", p) %}{% endcall %}
{%- else %}
{% call m::check_name_form("            ", p) %}{% endcall %}
{%- endif %}
{%- call batch::sum_delta(p) %}{% endcall %}
{%- if !p.auto_create %}
{%- call batch::find_slot_count(p) %}{% endcall %}
{%- endif %}
{%- call batch::next_entry(p) %}{% endcall %}
{%- call m::check_counter_limit("            ", p) %}{% endcall %}
            SET v_plan_part = CONCAT(v_plan_part, HEX(p_name), ':', v_slot, ':', v_delta, ';');
{%- call batch::gather_full_parts(p, ["v_plan"]) %}{% endcall %}
        END IF;
    END WHILE;
    CLOSE c_keys;
{%- call batch::gather_last_parts(["v_plan"]) %}{% endcall %}
{% call m::check_write_id("    ", p) %}{% endcall %}
{% call m::record_write("    ", p, "''", "v_plan") %}{% endcall %}
{% call m::forget_expired_writes("    ", p) %}{% endcall %}
END$$
