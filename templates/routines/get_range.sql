{%- import "_macros.sql" as m -%}
{%- import "routines/_periods.sql" as periods -%}
/*!80000 DROP FUNCTION IF EXISTS `{{ p.routine(Routine::GetRange) }}` */$$
-- What counter p_name counted in its buckets of p_period that start in
-- [p_from, p_to) (UTC): 0 for nothing, NULL for no such counter or period.
CREATE /*M! OR REPLACE */ FUNCTION `{{ p.routine(Routine::GetRange) }}`(
    p_name {{ p.types.name_type }},
    p_period {{ p.types.name_type }},
    p_from {{ p.types.moment_type }},
    p_to {{ p.types.moment_type }}
)
RETURNS BIGINT
NOT DETERMINISTIC
READS SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_message {{ p.types.message_type }};
    DECLARE v_from DATETIME(6);
    DECLARE v_to DATETIME(6);
    DECLARE v_offset SMALLINT;

{% call periods::check_period("    ", p) %}{% endcall %}
{% call periods::read_moment("    ", p, "p_from", "v_from") %}{% endcall %}
{% call periods::read_moment("    ", p, "p_to", "v_to") %}{% endcall %}
    IF p_from IS NOT NULL THEN
{% call periods::check_moment("        ", p, "p_from", "v_from", "from", false) %}{% endcall %}
    END IF;
    IF p_to IS NOT NULL THEN
{% call periods::check_moment("        ", p, "p_to", "v_to", "to", false) %}{% endcall %}
    END IF;
{% call m::null_if_unusable(p) %}{% endcall %}
{%- call periods::null_unless_tracked(p, ["v_from", "v_to"]) %}{% endcall %}
    RETURN (SELECT COALESCE(CAST(SUM(`counter`) AS SIGNED), 0) FROM `{{ p.names.buckets_table }}`
             WHERE `counter_name` = p_name AND `period` = p_period
               AND `bucket_start` >= v_from AND `bucket_start` < v_to);
END$$
