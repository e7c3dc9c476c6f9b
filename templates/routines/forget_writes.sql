{%- import "_macros.sql" as m -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::ForgetWrites) }}` */$$
-- Forgets write ids recorded over p_seconds ago (1 to {{ p.write_ids.forget_limit }}: 100 years),
-- {{ p.write_ids.forget_batch }} per DELETE, oldest first; each stops at a time read first, as a
-- LIMIT is unsafe for statement-based logging (1592). A write resent after
-- its id is forgotten counts again.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::ForgetWrites) }}`(
    IN p_seconds {{ p.types.number_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_before DATETIME(6);
    DECLARE v_until DATETIME(6);
    DECLARE v_count INT DEFAULT {{ p.write_ids.forget_batch }};
    DECLARE v_number DECIMAL(65, 30);
    DECLARE v_message {{ p.types.message_type }};

{% call m::read_number("    ", p, "p_seconds", "v_number") %}{% endcall %}
    IF NOT COALESCE(v_number = TRUNCATE(v_number, 0) AND v_number BETWEEN 1 AND {{ p.write_ids.forget_limit }}, FALSE) THEN
{% call m::refuse("        ", p, p.errors.invalid_argument) %}'seconds must be a whole number from 1 to {{ p.write_ids.forget_limit }} (100 years), not ', {% call m::number_text("p_seconds", "v_number") %}{% endcall %}{% endcall %}
    END IF;
    SET v_before = UTC_TIMESTAMP(6) - INTERVAL v_number SECOND;
    WHILE v_count = {{ p.write_ids.forget_batch }} DO
{% call m::oldest_expired_writes("        ", p, "v_before", p.write_ids.forget_batch, true) %}{% endcall %}
        DELETE FROM `{{ p.names.writes_table }}` WHERE `written_at` <= v_until;
    END WHILE;
END$$
