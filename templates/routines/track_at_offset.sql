{%- import "_macros.sql" as m -%}
{%- import "routines/_periods.sql" as periods -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::TrackAtOffset) }}` */$$
-- Starts counting counter p_name per p_period
-- ({% for period in p.periods.all %}{% if loop.last %} or {% else if !loop.first %}, {% endif %}'{{ period.name() }}'{% endfor %}), in buckets that start p_utc_offset
-- minutes east of UTC ({{ p.periods.west_most }} to {{ p.periods.east_most }}; 480: +08:00; NULL: the period's
-- current offset, UTC if untracked), keeping the last p_keep buckets, the
-- current one included (NULL: all; 0: stop and drop them). An offset is
-- fixed (no daylight saving): another is refused until p_keep 0 stops the
-- period. A new period first drops leftover buckets. Drops go {{ p.periods.expire_batch }} rows a
-- statement, each a short transaction in autocommit mode;
-- {{ p.routine(Routine::ExpirePeriods) }} removes buckets beyond p_keep.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::TrackAtOffset) }}`(
    IN p_name {{ p.types.name_type }},
    IN p_period {{ p.types.name_type }},
    IN p_keep {{ p.types.number_type }},
    IN p_utc_offset {{ p.types.number_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_message {{ p.types.message_type }};
    DECLARE v_tracked INT;
    DECLARE v_number DECIMAL(65, 30);
    DECLARE v_keep BIGINT;
    DECLARE v_offset SMALLINT;
    DECLARE v_tracked_offset SMALLINT;
{%- call periods::declare_drop("    ") %}{% endcall %}

{% call m::check_name_form("    ", p) %}{% endcall %}
{% call periods::check_period("    ", p) %}{% endcall %}
{% call m::read_number("    ", p, "p_keep", "v_number") %}{% endcall %}
    IF p_keep IS NOT NULL AND NOT COALESCE(v_number = TRUNCATE(v_number, 0) AND v_number BETWEEN 0 AND {{ p.periods.keep_all }}, FALSE) THEN
{% call m::refuse("        ", p, p.errors.invalid_argument) %}'keep must be NULL or a whole number from 0 to {{ p.periods.keep_all }}, not ', {% call m::number_text("p_keep", "v_number") %}{% endcall %}, '{{ refusals::FOR_COUNTER }}: ', QUOTE(p_name){% endcall %}
    END IF;
    SET v_keep = v_number;
{% call m::read_number("    ", p, "p_utc_offset", "v_number") %}{% endcall %}
    IF p_utc_offset IS NOT NULL AND NOT COALESCE(v_number = TRUNCATE(v_number, 0) AND v_number BETWEEN {{ p.periods.west_most }} AND {{ p.periods.east_most }}, FALSE) THEN
{% call m::refuse("        ", p, p.errors.invalid_argument) %}'{{ refusals::utc_offset_out_of_range(*p.periods.west_most, *p.periods.east_most) }} ', {% call m::number_text("p_utc_offset", "v_number") %}{% endcall %}, '{{ refusals::FOR_COUNTER }}: ', QUOTE(p_name){% endcall %}
    END IF;
    SET v_offset = v_number;
{%- if !p.has.auto_create %}
    IF NOT EXISTS (SELECT 1 FROM `{{ p.names.table }}` WHERE `counter_name` = p_name) THEN
{% call m::unknown_counter("        ", p) %}{% endcall %}
    END IF;
{%- endif %}
    SELECT COUNT(*), MAX(`utc_offset`) INTO v_tracked, v_tracked_offset FROM `{{ p.names.periods_table }}`
     WHERE `counter_name` = p_name AND `period` = p_period FOR UPDATE;
    IF v_keep = 0 THEN
        DELETE FROM `{{ p.names.periods_table }}` WHERE `counter_name` = p_name AND `period` = p_period;
    ELSEIF v_tracked > 0 AND v_offset <> v_tracked_offset THEN
{% call m::refuse("        ", p, p.errors.invalid_argument) %}'the ', p_period, ' {{ refusals::STARTS_AT_OFFSET }} ', v_tracked_offset, ' {{ refusals::OFFSET_STAYS }} ', v_offset, '{{ refusals::FOR_COUNTER }}: ', QUOTE(p_name){% endcall %}
    END IF;
    -- Buckets go after writes stop adding to them, or before they start.
    IF v_keep = 0 OR v_tracked = 0 THEN
{% call periods::drop_buckets("        ", p, "p_name", "p_period", "'9999-12-31'") %}{% endcall %}
    END IF;
    IF v_keep <> 0 OR v_keep IS NULL THEN
        INSERT INTO `{{ p.names.periods_table }}` (`counter_name`, `period`, `keep`, `utc_offset`)
        VALUES (p_name, p_period, v_keep, COALESCE(v_offset, 0))
        ON DUPLICATE KEY UPDATE `keep` = v_keep;
    END IF;
    -- The slots' flag, after the change: no write skips a period tracked now.
    UPDATE `{{ p.names.table }}` SET `untracked` = {% call m::tracks_none(p, "`" ~ p.names.table ~ "`.`counter_name`") %}{% endcall %}
     WHERE `counter_name` = p_name;
END$$
