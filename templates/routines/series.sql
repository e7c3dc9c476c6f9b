{%- import "_macros.sql" as m -%}
{%- import "routines/_periods.sql" as periods -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::Series) }}` */$$
-- For charts: one row per bucket of p_period that starts in [p_from, p_to)
-- (UTC), in order: `bucket_start` (UTC, at the period's offset) and `value`,
-- what counter p_name counted there (0: nothing). At most {{ p.periods.series_limit }} buckets;
-- reads only their rows. {{ p.errors.unknown_counter }}: no such counter; {{ p.errors.invalid_argument }}: period not tracked.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::Series) }}`(
    IN p_name {{ p.types.name_type }},
    IN p_period {{ p.types.name_type }},
    IN p_from {{ p.types.moment_type }},
    IN p_to {{ p.types.moment_type }}
)
READS SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_message {{ p.types.message_type }};
    -- The first bucket's start, and how many buckets the range holds.
    DECLARE v_first DATETIME;
    DECLARE v_count BIGINT;
    DECLARE v_from DATETIME(6);
    DECLARE v_to DATETIME(6);
    -- Minutes east of UTC: the range is cut in that local time, shown in UTC.
    DECLARE v_offset SMALLINT;

{% call m::check_name_form("    ", p) %}{% endcall %}
{% call periods::check_period("    ", p) %}{% endcall %}
{% call periods::read_moment("    ", p, "p_from", "v_from") %}{% endcall %}
{% call periods::check_moment("    ", p, "p_from", "v_from", "from", true) %}{% endcall %}
{% call periods::read_moment("    ", p, "p_to", "v_to") %}{% endcall %}
{% call periods::check_moment("    ", p, "p_to", "v_to", "to", true) %}{% endcall %}
    IF NOT EXISTS (SELECT 1 FROM `{{ p.names.table }}` WHERE `counter_name` = p_name) THEN
{% call m::unknown_counter("        ", p) %}{% endcall %}
    END IF;
    SET v_offset = (SELECT `utc_offset` FROM `{{ p.names.periods_table }}` WHERE `counter_name` = p_name AND `period` = p_period);
    IF v_offset IS NULL THEN
{% call m::refuse("        ", p, p.errors.invalid_argument) %}'{{ refusals::UNTRACKED_PERIOD }} ', QUOTE(p_period), '{{ refusals::FOR_COUNTER }}: ', QUOTE(p_name){% endcall %}
    END IF;
    SET v_from = v_from + INTERVAL v_offset MINUTE, v_to = v_to + INTERVAL v_offset MINUTE;
    CASE p_period
{%- for period in p.periods.all %}
    WHEN '{{ period.name() }}' THEN
        SET v_first = DATE_FORMAT(v_from, '{{ period.sql_start_format() }}');
        IF v_first < v_from THEN
            SET v_first = v_first + INTERVAL 1 {{ period.sql_unit() }};
        END IF;
        SET v_count = GREATEST(TIMESTAMPDIFF({{ period.sql_unit() }}, v_first, v_to), 0);
        IF v_first + INTERVAL v_count {{ period.sql_unit() }} < v_to THEN
            SET v_count = v_count + 1;
        END IF;
{%- endfor %}
    END CASE;
    IF v_count > {{ p.periods.series_limit }} THEN
{% call m::refuse("        ", p, p.errors.invalid_argument) %}'{{ refusals::series_too_long(*p.periods.series_limit) }}{{ refusals::FOR_COUNTER }}: ', QUOTE(p_name){% endcall %}
    END IF;
    WITH digit (d) AS ({{ p.periods.series_numbers.digits }})
    SELECT series.`bucket_start`, COALESCE(CAST(SUM(bucket.`counter`) AS SIGNED), 0) AS `value`
      FROM (SELECT CASE p_period{% for period in p.periods.all %} WHEN '{{ period.name() }}' THEN v_first + INTERVAL (number.n - 1) {{ period.sql_unit() }}{% endfor %} END
                   - INTERVAL v_offset MINUTE AS `bucket_start`
              FROM (SELECT {{ p.periods.series_numbers.number }} AS n FROM {{ p.periods.series_numbers.tables }}) AS number
             WHERE number.n <= v_count) AS series
      LEFT JOIN `{{ p.names.buckets_table }}` AS bucket
        ON bucket.`counter_name` = p_name AND bucket.`period` = p_period AND bucket.`bucket_start` = series.`bucket_start`
     GROUP BY series.`bucket_start`
     ORDER BY series.`bucket_start`;
END$$
