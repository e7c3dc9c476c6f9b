{%- import "_macros.sql" as m -%}
{%- import "routines/_add.sql" as add -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::Add) }}` */$$
{%- if p.auto_create %}
-- Adds p_delta, a whole number, to one slot of counter p_name ({{ p.invalid_argument }} when
-- the slot would pass {{ p.slot_bound }} either way), creating the slot
-- row, and so the counter, when it is not there yet: the lazy form of the
-- pattern. INSERT ... ON DUPLICATE KEY UPDATE takes gap and
-- insert-intention locks and can deadlock under concurrency (error 1213):
-- callers retry, as the Rust client does.
{%- else %}
-- Adds p_delta, a whole number, to one slot of counter p_name ({{ p.invalid_argument }} when
-- the slot would pass {{ p.slot_bound }} either way). Locks that one row;
-- inside a caller's transaction under MariaDB's snapshot isolation, also
-- share-locks two others of the counter to read its slot count.
{%- endif %}
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::Add) }}`(
    IN p_name {{ p.name_type }},
    IN p_delta {{ p.number_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
{%- call add::variables(p, true) %}{% endcall %}
{% call add::check_arguments(p, true) %}{% endcall %}
{%- call add::add_counted(p, "UTC_TIMESTAMP(6)", true) %}{% endcall %}
END$$