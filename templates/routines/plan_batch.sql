{%- import "routines/_add_many.sql" as batch -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::PlanBatch) }}` */$$
-- The batch routines' first step: checks p_deltas (see {{ p.routine(Routine::AddMany) }})
-- and picks each counter's slot{% if p.has.auto_create %} (its row may not exist yet){% endif %}; writes
-- nothing. p_plan gets p_entries entries, `hex(name):slot:delta;` in name
-- order. Called with their definer's rights: no application is granted it.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::PlanBatch) }}`(
    IN p_deltas {{ p.types.deltas_type }},
    OUT p_entries INT,
    OUT p_plan {{ p.types.statement_type }}
)
READS SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
{%- call batch::plan_variables(p) %}{% endcall %}
{%- call batch::plan(p) %}{% endcall %}
    SET p_entries = v_entries, p_plan = v_plan;
END$$
