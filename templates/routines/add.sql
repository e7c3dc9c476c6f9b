{%- import "_macros.sql" as m -%}
{%- import "routines/_add.sql" as add -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::Add) }}` */$$
{%- if p.auto_create %}
-- Adds p_delta (a whole number within BIGINT) to one slot of counter
-- p_name, creating the slot row, and so the counter, when it is not there
-- yet: the lazy form of the pattern. `counter` + v_delta, not VALUES(), which MySQL 8.0.20
-- deprecates. INSERT ... ON DUPLICATE KEY UPDATE takes gap and
-- insert-intention locks and can deadlock under concurrency (error 1213):
-- callers retry, as the Rust client does.
{%- else %}
-- Adds p_delta (a whole number within BIGINT) to one slot of counter
-- p_name. Locks that one row; inside a caller's transaction under
-- MariaDB's snapshot isolation, also share-locks two others to read the
-- slot count (read_slot_count).
{%- endif %}
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::Add) }}`(
    IN p_name {{ p.name_type }},
    IN p_delta {{ p.number_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
{%- call add::variables(p, true) %}{% endcall %}
{% call add::check_arguments(p) %}{% endcall %}
{%- call add::add_counted(p, "UTC_TIMESTAMP(6)") %}{% endcall %}
END$$