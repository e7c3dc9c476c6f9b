{%- import "_macros.sql" as m -%}
{%- import "routines/_add_many.sql" as batch -%}
{%- import "routines/_periods.sql" as periods -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::AddManyAt) }}` */$$
-- A late batch: {{ p.routine(Routine::AddMany) }} (p_write_id NULL) or {{ p.routine(Routine::AddManyOnce) }}
-- (p_write_id its 16 bytes), counting each delta in the buckets that hold
-- p_at (UTC, not after now), as {{ p.routine(Routine::AddAt) }} does.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::AddManyAt) }}`(
    IN p_write_id VARBINARY(64),
    IN p_deltas {{ p.types.deltas_type }},
    IN p_at {{ p.types.moment_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_moment DATETIME(6);
    DECLARE v_message {{ p.types.message_type }};
{%- call batch::planned(p) %}{% endcall %}
{% call periods::check_at("    ", p, false) %}{% endcall %}
    IF p_write_id IS NULL THEN
        IF v_entries > 0 THEN
            SET p_write_id = UNHEX(LEFT(SHA2(CONCAT_WS(':', UUID(), RAND(), NOW(6)), 256), 32));
{% call m::record_write("            ", p, "''", "v_plan", false, "v_moment") %}{% endcall %}
        END IF;
    ELSE
{% call m::check_write_id("        ", p) %}{% endcall %}
{% call m::record_write("        ", p, "''", "v_plan", true, "v_moment") %}{% endcall %}
    END IF;
{% call m::forget_expired_writes("    ", p) %}{% endcall %}
END$$
