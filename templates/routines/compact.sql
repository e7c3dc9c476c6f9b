{%- import "_macros.sql" as m -%}
{%- import "routines/_changes.sql" as change -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::Compact) }}` */$$
-- Folds every slot of counter p_name into slot 1{% if !p.has.auto_create %} (the others become 0){% endif %}, total
-- unchanged{% if p.has.bounds %} (a bounded counter's total is spread again){% endif %}. Locks every slot;
-- the trigger {{ p.names.change_trigger }} makes the change{% if p.cluster.changes_in_own_transaction %} (on MariaDB in autocommit
-- mode, a transaction of its own){% endif %}.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::Compact) }}`(
    IN p_name {{ p.types.name_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_message {{ p.types.message_type }};

{% call m::check_name_form("    ", p) %}{% endcall %}
{% call change::make("    ", p, "compact", "NULL", "NULL", "NULL", "NULL") %}{% endcall %}
END$$
