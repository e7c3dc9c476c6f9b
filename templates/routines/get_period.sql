{%- import "_macros.sql" as m -%}
{%- import "routines/_periods.sql" as periods -%}
/*!80000 DROP FUNCTION IF EXISTS `{{ p.routine(Routine::GetPeriod) }}` */$$
-- What counter p_name counted in its bucket of p_period that holds p_at (UTC):
-- 0 for nothing, NULL for no such counter or period. Refuses a p_at over {{ p.periods.read_ahead }}
-- seconds ahead, most likely a local time taken for UTC.
CREATE /*M! OR REPLACE */ FUNCTION `{{ p.routine(Routine::GetPeriod) }}`(
    p_name {{ p.types.name_type }},
    p_period {{ p.types.name_type }},
    p_at {{ p.types.moment_type }}
)
RETURNS BIGINT
NOT DETERMINISTIC
READS SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_message {{ p.types.message_type }};
    DECLARE v_moment DATETIME(6);
    DECLARE v_offset SMALLINT;

{% call periods::check_period("    ", p) %}{% endcall %}
{% call periods::read_moment("    ", p, "p_at", "v_moment") %}{% endcall %}
    IF p_at IS NOT NULL THEN
{% call periods::check_moment("        ", p, "p_at", "v_moment", "at", false) %}{% endcall %}
        IF v_moment > UTC_TIMESTAMP(6) + INTERVAL {{ p.periods.read_ahead }} SECOND THEN
{% call m::refuse("            ", p, p.errors.invalid_argument) %}'{{ refusals::read_too_far_ahead(*p.periods.read_ahead) }} ', v_moment{% endcall %}
        END IF;
    END IF;
{% call m::null_if_unusable(p) %}{% endcall %}
{%- call periods::null_unless_tracked(p, ["v_moment"]) %}{% endcall %}
    RETURN (SELECT COALESCE(CAST(SUM(`counter`) AS SIGNED), 0) FROM `{{ p.names.buckets_table }}`
             WHERE `counter_name` = p_name AND `period` = p_period
               AND `bucket_start` = {% call periods::bucket_start(p, "p_period", "v_moment", "v_offset") %}{% endcall %});
END$$
