{%- import "_macros.sql" as m -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::Delete) }}` */$$
-- Removes counter p_name, all its slots, and its last change.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::Delete) }}`(
    IN p_name {{ p.name_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_message {{ p.message_type }};

{% call m::check_name_form("    ", p) %}{% endcall %}
    DELETE `{{ p.table }}` FROM `{{ p.table }}` FORCE INDEX (PRIMARY) WHERE `counter_name` = p_name;
    IF ROW_COUNT() = 0 THEN
{% call m::unknown_counter("        ", p) %}{% endcall %}
    END IF;
    DELETE FROM `{{ p.changes_table }}` WHERE `counter_name` = p_name;
END$$
