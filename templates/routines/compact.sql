{%- import "_macros.sql" as m -%}
{%- import "routines/_changes.sql" as change -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::Compact) }}` */$$
-- Folds every slot of counter p_name into slot 1, total unchanged{% if !p.auto_create %}: the
-- other slots become 0{% endif %}. {% if p.changes_in_own_transaction %}On MariaDB in autocommit mode a
-- transaction of its own, else one statement (the trigger {{ p.change_trigger }}
-- makes the change it records); either locks every slot of the counter.{% else %}One statement, which locks every slot of the
-- counter: the trigger {{ p.change_trigger }} makes the change it records.{% endif %}
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::Compact) }}`(
    IN p_name {{ p.name_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_message {{ p.message_type }};

{% call m::check_name_form("    ", p) %}{% endcall %}
{% call change::make("    ", p, "compact", "NULL", "NULL", "NULL", "NULL") %}{% endcall %}
END$$
