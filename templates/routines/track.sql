{%- import "_macros.sql" as m -%}
{%- import "routines/_periods.sql" as periods -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::Track) }}` */$$
-- Starts counting counter p_name per p_period ({% for period in p.periods %}{% if loop.last %} or {% else if !loop.first %}, {% endif %}'{{ period.name() }}'{% endfor %}), in
-- buckets that start at UTC boundaries, keeping the last p_keep buckets,
-- the current one included (NULL: all). From then on every write that
-- changes the counter's total adds its delta to the current bucket, in the
-- write's statement. Called again, it changes p_keep: {{ p.routine(Routine::ExpirePeriods) }}
-- removes the buckets beyond it. p_keep 0 stops counting per p_period and
-- drops its buckets. A period that starts being counted starts with no
-- bucket: one left by a counter of the same name that was deleted, or by a
-- drop that was cut short, is dropped first. Buckets are dropped {{ p.expire_batch }} rows
-- per statement, each a short transaction in autocommit mode.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::Track) }}`(
    IN p_name {{ p.name_type }},
    IN p_period {{ p.name_type }},
    IN p_keep {{ p.number_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_message {{ p.message_type }};
    DECLARE v_tracked INT;
    DECLARE v_number DECIMAL(65, 30);
    DECLARE v_keep BIGINT;
{%- call periods::declare_drop("    ") %}{% endcall %}

{% call m::check_name_form("    ", p) %}{% endcall %}
{% call periods::check_period("    ", p) %}{% endcall %}
{% call m::read_number("    ", "p_keep", "v_number") %}{% endcall %}
    IF p_keep IS NOT NULL AND NOT COALESCE(v_number = TRUNCATE(v_number, 0) AND v_number BETWEEN 0 AND {{ p.keep_all }}, FALSE) THEN
{% call m::refuse("        ", p, p.invalid_argument) %}'keep must be NULL or a whole number from 0 to {{ p.keep_all }}, not ', {% call m::number_text("p_keep", "v_number") %}{% endcall %}, '{{ refusals::FOR_COUNTER }}: ', QUOTE(p_name){% endcall %}
    END IF;
    SET v_keep = v_number;
{%- if !p.auto_create %}
    IF NOT EXISTS (SELECT 1 FROM `{{ p.table }}` WHERE `counter_name` = p_name) THEN
{% call m::unknown_counter("        ", p) %}{% endcall %}
    END IF;
{%- endif %}
    SELECT COUNT(*) INTO v_tracked FROM `{{ p.periods_table }}`
     WHERE `counter_name` = p_name AND `period` = p_period FOR UPDATE;
    IF v_keep = 0 THEN
        DELETE FROM `{{ p.periods_table }}` WHERE `counter_name` = p_name AND `period` = p_period;
    ELSE
        IF v_tracked = 0 THEN
{% call periods::drop_buckets("            ", p, "p_name", "p_period", "'9999-12-31'") %}{% endcall %}
        END IF;
        INSERT INTO `{{ p.periods_table }}` (`counter_name`, `period`, `keep`) VALUES (p_name, p_period, v_keep)
        ON DUPLICATE KEY UPDATE `keep` = v_keep;
    END IF;
    -- The slots tell the writes whether to look at the periods: after the
    -- change, so that no write skips a period tracked from now on.
    UPDATE `{{ p.table }}` SET `untracked` = {% call m::tracks_none(p, "`" ~ p.table ~ "`.`counter_name`") %}{% endcall %}
     WHERE `counter_name` = p_name;
    IF v_keep = 0 THEN
{% call periods::drop_buckets("        ", p, "p_name", "p_period", "'9999-12-31'") %}{% endcall %}
    END IF;
END$$
