{%- import "_macros.sql" as m -%}
{%- import "routines/_add_many.sql" as batch -%}
{%- import "routines/_periods.sql" as periods -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::AddMany) }}` */$$
-- Adds each delta of p_deltas, a JSON object {"name": delta, ...} of at most
-- {{ p.batch_limit }} counters and {{ p.batch_bytes }} bytes, to one slot of its counter, creating the slot
-- row, and so the counter, when it is not there yet. Names that collate
-- equal are one counter: their deltas are summed. Every name and delta is
-- checked first, and all of them are applied by one statement: on any error
-- none is, in autocommit mode and inside the caller's transaction alike.
-- The statement reaches the counters in the order of their names, so two
-- batches cannot deadlock on each other. It is built as text (PREPARE), with names as hex
-- literals: a quoted literal would be read in the session's character set.
-- A batch of which a counter tracks periods is applied as {{ p.routine(Routine::AddManyOnce) }}
-- applies its batch, under an id of its own, so that each delta counts in
-- its counter's buckets in the same statement.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::AddMany) }}`(
    IN p_deltas {{ p.deltas_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
{%- call batch::check_variables(p) %}{% endcall %}
    DECLARE v_slot INT;
{%- call m::declare_position("    ", p) %}{% endcall %}
    DECLARE v_entries INT DEFAULT 0;
    DECLARE v_rows {{ p.statement_type }} DEFAULT '';
    DECLARE v_cases {{ p.statement_type }} DEFAULT '';
    -- The write's slots, `hex(name):slot:delta;` each, for the write-id
    -- trigger when a counter tracks periods; how many of them do.
    DECLARE v_plan {{ p.statement_type }} DEFAULT '';
{%- call periods::declare_keeps("    ", p) %}{% endcall %}
    DECLARE v_tracked BOOLEAN DEFAULT FALSE;
    DECLARE p_write_id BINARY(16);
{%- call batch::declare_parts(p, ["v_rows", "v_cases", "v_plan"]) %}{% endcall %}
{%- call batch::each_counter(p, ["v_rows", "v_cases", "v_plan"]) %}
            SET v_rows_part = CONCAT(v_rows_part, IF(v_entries = 1, '', ', '),
                '(CONVERT(0x', HEX(p_name), ' USING {{ p.charset }}), ', v_slot, ', NULL, NOW(), ', v_delta, ')');
            SET v_cases_part = CONCAT(v_cases_part, ' WHEN CONVERT(0x', HEX(p_name), ' USING {{ p.charset }}) COLLATE {{ p.collation }} THEN ', v_delta);
            SET v_plan_part = CONCAT(v_plan_part, HEX(p_name), ':', v_slot, ':', v_delta, ';');
{% call periods::read_keeps("            ", p, false) %}{% endcall %}
            SET v_tracked = v_tracked OR {% call periods::tracks_any(p) %}{% endcall %};
{%- endcall %}
    IF v_tracked THEN
        SET p_write_id = UNHEX(LEFT(SHA2(CONCAT_WS(':', UUID(), RAND(), NOW(6)), 256), 32));
{% call m::record_write("        ", p, "''", "v_plan", false, "NULL") %}{% endcall %}
{% call m::forget_expired_writes("        ", p) %}{% endcall %}
    ELSEIF v_entries > 0 THEN
        SET @slotted_counters_batch = CONCAT(
            'INSERT INTO `{{ p.table }}` (`counter_name`, `counter_id`, `description`, `start_date`, `counter`) VALUES ',
            v_rows, ' ON DUPLICATE KEY UPDATE `counter` = `counter` + CASE `counter_name`', v_cases, ' END');
        PREPARE slotted_counters_batch FROM @slotted_counters_batch;
        SET @slotted_counters_batch = NULL;
        EXECUTE slotted_counters_batch;
        DEALLOCATE PREPARE slotted_counters_batch;
    END IF;
END$$
