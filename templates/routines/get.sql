{%- import "_macros.sql" as m -%}
/*!80000 DROP FUNCTION IF EXISTS `{{ p.routine(Routine::Get) }}` */$$
-- The value of counter p_name, the sum of its slots; NULL for no such
-- counter or a name none may have, so one SELECT can read many names.
CREATE /*M! OR REPLACE */ FUNCTION `{{ p.routine(Routine::Get) }}`(
    p_name {{ p.name_type }}
)
RETURNS BIGINT
NOT DETERMINISTIC
READS SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
{% call m::null_if_unusable(p) %}{% endcall %}
    RETURN (SELECT CAST(SUM(`counter`) AS SIGNED) FROM `{{ p.table }}` WHERE `counter_name` = p_name);
END$$
