{%- import "_macros.sql" as m -%}
{%- import "routines/_periods.sql" as periods -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::TrackAtOffset) }}` */$$
-- Starts counting counter p_name per p_period ({% for period in p.periods %}{% if loop.last %} or {% else if !loop.first %}, {% endif %}'{{ period.name() }}'{% endfor %}), in
-- buckets that start p_utc_offset minutes east of UTC ({{ p.west_most }} to {{ p.east_most }}: 480
-- for +08:00, 345 for +05:45, -300 for -05:00; NULL: where the period
-- starts them already, UTC for a period not tracked yet), keeping the last
-- p_keep buckets, the current one included (NULL: all). A day at 480 starts
-- at 16:00 UTC, the midnight of Shanghai, and so does its limit's reset.
-- An offset is fixed: a time zone with daylight saving has two, and counts
-- its days at one of them. Buckets keep the offset they started at: one
-- tracked at another is refused, until keep 0 drops its buckets.
-- From then on every write that changes the counter's total adds its
-- delta to the current bucket, in the write's statement. Called again, it
-- changes p_keep: {{ p.routine(Routine::ExpirePeriods) }} removes the buckets beyond it.
-- p_keep 0 stops counting per p_period and drops its buckets. A period
-- that starts being counted starts with no bucket: one left by a counter
-- of the same name that was deleted, or by a drop that was cut short, is
-- dropped first. Buckets are dropped {{ p.expire_batch }} rows per statement, each a
-- short transaction in autocommit mode.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::TrackAtOffset) }}`(
    IN p_name {{ p.name_type }},
    IN p_period {{ p.name_type }},
    IN p_keep {{ p.number_type }},
    IN p_utc_offset {{ p.number_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_message {{ p.message_type }};
    DECLARE v_tracked INT;
    DECLARE v_number DECIMAL(65, 30);
    DECLARE v_keep BIGINT;
    DECLARE v_offset SMALLINT;
    DECLARE v_tracked_offset SMALLINT;
{%- call periods::declare_drop("    ") %}{% endcall %}

{% call m::check_name_form("    ", p) %}{% endcall %}
{% call periods::check_period("    ", p) %}{% endcall %}
{% call m::read_number("    ", p, "p_keep", "v_number") %}{% endcall %}
    IF p_keep IS NOT NULL AND NOT COALESCE(v_number = TRUNCATE(v_number, 0) AND v_number BETWEEN 0 AND {{ p.keep_all }}, FALSE) THEN
{% call m::refuse("        ", p, p.invalid_argument) %}'keep must be NULL or a whole number from 0 to {{ p.keep_all }}, not ', {% call m::number_text("p_keep", "v_number") %}{% endcall %}, '{{ refusals::FOR_COUNTER }}: ', QUOTE(p_name){% endcall %}
    END IF;
    SET v_keep = v_number;
{% call m::read_number("    ", p, "p_utc_offset", "v_number") %}{% endcall %}
    IF p_utc_offset IS NOT NULL AND NOT COALESCE(v_number = TRUNCATE(v_number, 0) AND v_number BETWEEN {{ p.west_most }} AND {{ p.east_most }}, FALSE) THEN
{% call m::refuse("        ", p, p.invalid_argument) %}'{{ refusals::utc_offset_out_of_range(*p.west_most, *p.east_most) }} ', {% call m::number_text("p_utc_offset", "v_number") %}{% endcall %}, '{{ refusals::FOR_COUNTER }}: ', QUOTE(p_name){% endcall %}
    END IF;
    SET v_offset = v_number;
{%- if !p.auto_create %}
    IF NOT EXISTS (SELECT 1 FROM `{{ p.table }}` WHERE `counter_name` = p_name) THEN
{% call m::unknown_counter("        ", p) %}{% endcall %}
    END IF;
{%- endif %}
    SELECT COUNT(*), MAX(`utc_offset`) INTO v_tracked, v_tracked_offset FROM `{{ p.periods_table }}`
     WHERE `counter_name` = p_name AND `period` = p_period FOR UPDATE;
    IF v_keep = 0 THEN
        DELETE FROM `{{ p.periods_table }}` WHERE `counter_name` = p_name AND `period` = p_period;
    ELSEIF v_tracked > 0 AND v_offset <> v_tracked_offset THEN
{% call m::refuse("        ", p, p.invalid_argument) %}'the ', p_period, ' {{ refusals::STARTS_AT_OFFSET }} ', v_tracked_offset, ' {{ refusals::OFFSET_STAYS }} ', v_offset, '{{ refusals::FOR_COUNTER }}: ', QUOTE(p_name){% endcall %}
    END IF;
    -- A period that stops being counted drops its buckets once writes no
    -- longer add to them; one that starts, before they do.
    IF v_keep = 0 OR v_tracked = 0 THEN
{% call periods::drop_buckets("        ", p, "p_name", "p_period", "'9999-12-31'") %}{% endcall %}
    END IF;
    IF v_keep <> 0 OR v_keep IS NULL THEN
        INSERT INTO `{{ p.periods_table }}` (`counter_name`, `period`, `keep`, `utc_offset`)
        VALUES (p_name, p_period, v_keep, COALESCE(v_offset, 0))
        ON DUPLICATE KEY UPDATE `keep` = v_keep;
    END IF;
    -- The slots tell the writes whether to look at the periods: after the
    -- change, so that no write skips a period tracked from now on.
    UPDATE `{{ p.table }}` SET `untracked` = {% call m::tracks_none(p, "`" ~ p.table ~ "`.`counter_name`") %}{% endcall %}
     WHERE `counter_name` = p_name;
END$$
