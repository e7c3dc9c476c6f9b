{%- import "routines/_add_many.sql" as batch -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::PlanBatch) }}` */$$
-- The first step of {{ p.routine(Routine::AddMany) }}, {{ p.routine(Routine::AddManyOnce) }} and {{ p.routine(Routine::AddManyAt) }}:
-- checks every name and delta of p_deltas, a JSON object {"name": delta, ...}
-- of at most {{ p.batch_limit }} counters and {{ p.batch_bytes }} bytes, and picks one slot of each
-- counter{% if p.auto_create %}, whose slot row need not be there yet{% endif %}. Names that collate equal are one counter:
-- their deltas are summed. Writes nothing: it returns the write's slots in
-- p_plan (`hex(name):slot:delta;` each, in the order of the names), p_entries
-- of them, for the write-id trigger to apply in one statement. The batch
-- routines call it with their definer's rights; no application is granted it.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::PlanBatch) }}`(
    IN p_deltas {{ p.deltas_type }},
    OUT p_entries INT,
    OUT p_plan {{ p.statement_type }}
)
READS SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
{%- call batch::plan_variables(p) %}{% endcall %}
{%- call batch::plan(p) %}{% endcall %}
    SET p_entries = v_entries, p_plan = v_plan;
END$$
