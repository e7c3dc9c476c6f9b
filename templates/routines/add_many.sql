{%- import "_macros.sql" as m -%}
{%- import "routines/_add_many.sql" as batch -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::AddMany) }}` */$$
-- Adds each delta of p_deltas, a JSON object {"name": delta, ...} of at most
-- {{ p.batch_limit }} counters and {{ p.batch_bytes }} bytes, to one slot of its counter{% if p.auto_create %}, creating the slot
-- row, and so the counter, when it is not there yet{% endif %}. Names that collate
-- equal are one counter: their deltas are summed. Every name and delta is
-- checked first; then one statement applies all of them: on any error none
-- is, in autocommit mode and inside the caller's transaction alike. It is
-- {{ p.routine(Routine::AddManyOnce) }} under a write id of the call's own: the INSERT of
-- the id, whose trigger adds each delta to its slot, counter by counter in
-- the order of their names, so that two batches cannot deadlock on each
-- other. It opens no transaction: a call the server kills, which on MySQL
-- runs no handler, leaves nothing open on the connection. Its id is
-- forgotten with the others.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::AddMany) }}`(
    IN p_deltas {{ p.deltas_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    -- The batch's write id, named like {{ p.routine(Routine::AddManyOnce) }}'s parameter.
    DECLARE p_write_id BINARY(16);
{%- call batch::planned(p) %}{% endcall %}
    IF v_entries > 0 THEN
        -- An id no other write has, on this server or another one of a
        -- cluster: UUID() is unique on its server, and the hash of it with
        -- RAND() and the time (SHA2: MySQL 9 has no MD5) leaves two servers
        -- 16 random bytes apart. Computed into a variable, which
        -- statement-based logging records as a constant.
        SET p_write_id = UNHEX(LEFT(SHA2(CONCAT_WS(':', UUID(), RAND(), NOW(6)), 256), 32));
{% call m::record_write("        ", p, "''", "v_plan", false, "NULL") %}{% endcall %}
{% call m::forget_expired_writes("        ", p) %}{% endcall %}
    END IF;
END$$
