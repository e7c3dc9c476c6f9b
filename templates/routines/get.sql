{%- import "_macros.sql" as m -%}
/*!80000 DROP FUNCTION IF EXISTS `{{ p.routine(Routine::Get) }}` */$$
-- The sum of counter p_name's slots; NULL, not an error, for an unknown name.
CREATE /*M! OR REPLACE */ FUNCTION `{{ p.routine(Routine::Get) }}`(
    p_name {{ p.types.name_type }}
)
RETURNS BIGINT
NOT DETERMINISTIC
READS SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
{% call m::null_if_unusable(p) %}{% endcall %}
    RETURN (SELECT CAST(SUM(`counter`) AS SIGNED) FROM `{{ p.names.table }}` WHERE `counter_name` = p_name);
END$$
