{%- import "_macros.sql" as m -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.compact }}` */$$
-- Folds every slot of counter p_name into slot 1, total unchanged{% if !p.auto_create %}: the
-- other slots become 0{% endif %}. One statement, which locks every slot of the
-- counter: the trigger {{ p.change_trigger }} makes the change it records.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.compact }}`(
    IN p_name {{ p.name_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_message {{ p.message_type }};

{% call m::check_name_form("    ", p) %}{% endcall %}
{% call m::record_change("    ", p, "compact", "NULL", "NULL", "NULL", "NULL") %}{% endcall %}
END$$
