{%- import "_macros.sql" as m -%}
{%- import "routines/_periods.sql" as periods -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::Delete) }}` */$$
-- Removes counter p_name: its slots
{%- if p.has_changes_table %}, last change{% endif %}
{%- if p.bounds %}, last spread{% endif %}
{%- if p.periods_feature %},
-- tracked periods, their buckets ({{ p.expire_batch }} rows per statement) and last
-- tracked writes{% endif %}.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::Delete) }}`(
    IN p_name {{ p.name_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_message {{ p.message_type }};
{%- if p.periods_feature %}
    DECLARE v_period {{ p.period_type }};
    DECLARE v_period_index INT;
{%- call periods::declare_drop("    ") %}{% endcall %}
{%- endif %}

{% call m::check_name_form("    ", p) %}{% endcall %}
    DELETE `{{ p.table }}` FROM `{{ p.table }}` FORCE INDEX (PRIMARY) WHERE `counter_name` = p_name;
{%- if p.counter_rows_tables.is_empty() %}
    IF ROW_COUNT() = 0 THEN
{%- else %}
    -- Slots first, so that writes find no counter. In autocommit mode each
    -- DELETE commits alone: one cut short leaves rows that refuse a setup of
    -- the name until a second call removes them ({{ p.unknown_counter }} only when none is left).
    IF ROW_COUNT() = 0 AND NOT {% call m::rows_left_beside_slots("    ", p) %}{% endcall %} THEN
{%- endif %}
{% call m::unknown_counter("        ", p) %}{% endcall %}
    END IF;
{%- for table in p.counter_rows_tables %}
    DELETE FROM `{{ table }}` WHERE `counter_name` = p_name;
{%- endfor %}
{%- if p.periods_feature %}
{% call periods::drop_all_buckets("    ", p, "p_name") %}{% endcall %}
{%- endif %}
END$$
