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
{%- call batch::declare_parts(p, ["v_rows", "v_cases"]) %}{% endcall %}
{%- call batch::each_counter(p, ["v_rows", "v_cases"]) %}
            SET v_rows_part = CONCAT(v_rows_part, IF(v_entries = 1, '', ', '),
                '(CONVERT(0x', HEX(p_name), ' USING {{ p.charset }}), ', v_slot, ', NULL, NOW(), ', v_delta, ')');
            SET v_cases_part = CONCAT(v_cases_part, ' WHEN CONVERT(0x', HEX(p_name), ' USING {{ p.charset }}) COLLATE {{ p.collation }} THEN ', v_delta);
{%- endcall %}
    IF v_entries > 0 THEN
        SET @slotted_counters_batch = CONCAT(
            'INSERT INTO `{{ p.table }}` (`counter_name`, `counter_id`, `description`, `start_date`, `counter`) VALUES ',
            v_rows, ' ON DUPLICATE KEY UPDATE `counter` = `counter` + CASE `counter_name`', v_cases, ' END');
        PREPARE slotted_counters_batch FROM @slotted_counters_batch;
        SET @slotted_counters_batch = NULL;
{% call periods::count_at("        ", p, "UTC_TIMESTAMP(6)") %}
        EXECUTE slotted_counters_batch;
{%- endcall %}
        DEALLOCATE PREPARE slotted_counters_batch;
    END IF;
END$$
