{%- import "_macros.sql" as m -%}
{%- import "routines/_add.sql" as add -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::Add) }}` */$$
{%- if p.has.auto_create %}
-- Adds p_delta, a whole number, to one slot of counter p_name; {{ p.errors.invalid_argument }} if
-- the slot would pass {{ p.slots.bound }} either way. Creates a missing slot
-- row (and so the counter): its INSERT ... ON DUPLICATE KEY UPDATE takes
-- gap and insert-intention locks and can deadlock (1213), which callers retry.
{%- else %}
-- Adds p_delta, a whole number, to one slot of counter p_name; {{ p.errors.invalid_argument }} if
-- the slot would pass {{ p.slots.bound }} either way. Locks that slot's row
{%- if p.has.bounds || p.has.periods %}, and
-- more only as {% if p.has.bounds %}its bounds{% if p.has.periods %} or limits{% endif %}{% else %}its limits{% endif %} need{% endif %}.
{%- if p.slots.fixed.is_none() %}
-- In a caller's transaction under MariaDB's snapshot isolation, it also
-- share-locks two others to read the slot count.
{%- endif %}
{%- endif %}
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::Add) }}`(
    IN p_name {{ p.types.name_type }},
    IN p_delta {{ p.types.number_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
{%- call add::variables(p, true) %}{% endcall %}
{% call add::check_arguments(p, true) %}{% endcall %}
{%- call add::add_counted(p, "UTC_TIMESTAMP(6)", true) %}{% endcall %}
END$$