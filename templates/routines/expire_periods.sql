{%- import "_macros.sql" as m -%}
{%- import "routines/_periods.sql" as periods -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::ExpirePeriods) }}` */$$
-- Removes the buckets each period no longer keeps (keep n: all before the
-- n - 1 before the current one, at the period's offset), {{ p.periods.expire_batch }} rows per
-- statement, oldest first. Never changes a total. Run it hourly, say.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::ExpirePeriods) }}`()
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_name {{ p.types.name_type }};
    DECLARE v_period {{ p.types.period_type }};
    DECLARE v_keep BIGINT;
    DECLARE v_offset SMALLINT;
    DECLARE v_before DATETIME;
    DECLARE v_done BOOLEAN DEFAULT FALSE;
{%- call periods::declare_drop("    ") %}{% endcall %}
    DECLARE c_periods CURSOR FOR
        SELECT `counter_name`, `period`, `keep`, `utc_offset` FROM `{{ p.names.periods_table }}` WHERE `keep` IS NOT NULL;
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = TRUE;

    OPEN c_periods;
    FETCH c_periods INTO v_name, v_period, v_keep, v_offset;
    WHILE NOT v_done DO
        CASE v_period
{%- for period in p.periods.all %}
        WHEN '{{ period.name() }}' THEN
            SET v_before = DATE_FORMAT(UTC_TIMESTAMP() + INTERVAL v_offset MINUTE, '{{ period.sql_start_format() }}');
            IF v_keep - 1 < TIMESTAMPDIFF({{ period.sql_unit() }}, '{{ p.periods.first_year }}-01-01', v_before) THEN
                SET v_before = v_before - INTERVAL (v_keep - 1) {{ period.sql_unit() }} - INTERVAL v_offset MINUTE;
            ELSE
                SET v_before = '{{ p.periods.first_year }}-01-01';
            END IF;
{%- endfor %}
        END CASE;
{% call periods::drop_buckets("        ", p, "v_name", "v_period", "v_before") %}{% endcall %}
        FETCH c_periods INTO v_name, v_period, v_keep, v_offset;
    END WHILE;
    CLOSE c_periods;
END$$
