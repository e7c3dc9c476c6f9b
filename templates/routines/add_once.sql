{%- import "_macros.sql" as m -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.add_once }}` */$$
-- {{ p.add }} with a write id p_write_id (16 random bytes the caller chose for
-- this write): adds p_delta to counter p_name once, however often it is
-- called with that id within the package's window. The id is recorded by
-- the statement that applies the delta; a call whose id is recorded changes
-- nothing and succeeds. After a lost answer, call again with the same id.
-- It opens no transaction: in autocommit mode its one write commits alone,
-- and the slot count is read by a statement of its own, whose read view
-- closes with it.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.add_once }}`(
    IN p_write_id VARBINARY(64),
    IN p_name {{ p.name_type }},
    IN p_delta {{ p.number_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
{%- if p.fixed_slots.is_none() %}
    DECLARE v_slots INT;
{%- endif %}
    DECLARE v_slot INT;
    DECLARE v_delta BIGINT;
{%- call m::declare_position("    ", p) %}{% endcall %}
    DECLARE v_message {{ p.message_type }};
{%- if p.fixed_slots.is_none() %}
    -- An unknown counter leaves v_slots NULL; no "No data" warning.
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_slots = NULL;
{%- endif %}

{% call m::check_write_id("    ", p) %}{% endcall %}
{% call m::check_delta("    ", p) %}{% endcall %}
{%- if p.auto_create %}
{% call m::check_name("    ", p) %}{% endcall %}
{%- else %}
{% call m::check_name_form("    ", p) %}{% endcall %}
{%- endif %}
{%- if p.fixed_slots.is_none() %}
{% call m::read_slot_count("    ", p, "v_slots") %}{% endcall %}
    IF v_slots IS NULL THEN
{% call m::unknown_counter("        ", p) %}{% endcall %}
    END IF;
{%- endif %}
{%- call m::find_position("    ", p) %}{% endcall %}
{% call m::pick_slot("    ", p) %}{% endcall %}
{%- call m::check_counter_limit("    ", p) %}{% endcall %}
{% call m::record_write("    ", p, "p_name", "CONCAT(HEX(p_name), ':', v_slot, ':', v_delta, ';')") %}{% endcall %}
{% call m::forget_expired_writes("    ", p) %}{% endcall %}
END$$
