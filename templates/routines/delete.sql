{%- import "_macros.sql" as m -%}
{%- import "routines/_periods.sql" as periods -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::Delete) }}` */$$
-- Removes counter p_name: its slots
{%- if p.has.changes_table %}, last change{% endif %}
{%- if p.has.bounds %}, last spread{% endif %}
{%- if p.has.periods %},
-- tracked periods, their buckets ({{ p.periods.expire_batch }} rows per statement) and last
-- tracked writes{% endif %}.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::Delete) }}`(
    IN p_name {{ p.types.name_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_message {{ p.types.message_type }};
{%- if p.has.periods %}
    DECLARE v_period {{ p.types.period_type }};
    DECLARE v_period_index INT;
{%- call periods::declare_drop("    ") %}{% endcall %}
{%- endif %}

{% call m::check_name_form("    ", p) %}{% endcall %}
    DELETE `{{ p.names.table }}` FROM `{{ p.names.table }}` FORCE INDEX (PRIMARY) WHERE `counter_name` = p_name;
{%- if p.names.counter_rows_tables.is_empty() %}
    IF ROW_COUNT() = 0 THEN
{%- else %}
    -- Slots first, so that writes find no counter. In autocommit mode each
    -- DELETE commits alone: one cut short leaves rows that refuse a setup of
    -- the name until a second call removes them ({{ p.errors.unknown_counter }} only when none is left).
    IF ROW_COUNT() = 0 AND NOT {% call m::rows_left_beside_slots("    ", p) %}{% endcall %} THEN
{%- endif %}
{% call m::unknown_counter("        ", p) %}{% endcall %}
    END IF;
{%- for table in p.names.counter_rows_tables %}
    DELETE FROM `{{ table }}` WHERE `counter_name` = p_name;
{%- endfor %}
{%- if p.has.periods %}
{% call periods::drop_all_buckets("    ", p, "p_name") %}{% endcall %}
{%- endif %}
END$$
