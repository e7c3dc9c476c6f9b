{%- import "_macros.sql" as m -%}
{%- import "routines/_periods.sql" as periods -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::Room) }}` */$$
-- One row per bound and limit of counter p_name: `kind` (floor, ceiling or
-- limit), `period` (NULL for a bound), `bound`, `value` (the total, or the
-- current bucket's count), `room` (how far a write may still move it) and
-- `resets_at` (when the bucket ends, UTC). Locks nothing.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::Room) }}`(
    IN p_name {{ p.types.name_type }}
)
READS SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_message {{ p.types.message_type }};

{% call m::check_name_form("    ", p) %}{% endcall %}
    IF NOT EXISTS (SELECT 1 FROM `{{ p.names.table }}` WHERE `counter_name` = p_name) THEN
{% call m::unknown_counter("        ", p) %}{% endcall %}
    END IF;
    SELECT `kind`, `period`, `bound`, `value`, `room`, `resets_at`
      FROM ({% call periods::room_rows(p, "p_name", "            ") %}{% endcall %}
           ) AS `rows`
     ORDER BY `place`;
END$$
