{%- import "_macros.sql" as m -%}
{%- import "routines/_add_many.sql" as batch -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::AddMany) }}` */$$
-- Adds each delta of p_deltas, a JSON object {"name": delta, ...} of at most
-- {{ p.batches.limit }} counters and {{ p.batches.bytes }} bytes, to one slot of its counter{% if p.has.auto_create %}, creating
-- the slot row, and so the counter, when missing{% endif %}. Names that
-- collate equal are one counter (deltas summed). All is checked first; then
-- one statement applies all or nothing: the INSERT of a write id of the
-- call's own, as in {{ p.routine(Routine::AddManyOnce) }}, whose trigger writes the
-- counters in name order so that two batches cannot deadlock.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::AddMany) }}`(
    IN p_deltas {{ p.types.deltas_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE p_write_id BINARY(16);
{%- call batch::planned(p) %}{% endcall %}
    IF v_entries > 0 THEN
        -- Unique across a cluster's servers: a hash of UUID(), RAND() and the
        -- time (SHA2: MySQL 9 has no MD5). Set into a variable, which
        -- statement-based logging records as a constant.
        SET p_write_id = UNHEX(LEFT(SHA2(CONCAT_WS(':', UUID(), RAND(), NOW(6)), 256), 32));
{% call m::record_write("        ", p, "''", "v_plan", false, "NULL") %}{% endcall %}
{% call m::forget_expired_writes("        ", p) %}{% endcall %}
    END IF;
END$$
