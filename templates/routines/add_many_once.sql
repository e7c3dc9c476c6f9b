{%- import "_macros.sql" as m -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.add_many_once }}` */$$
-- {{ p.add_many }} with a write id p_write_id: applies the batch p_deltas
-- once, however often it is called with that id within the package's
-- window, as {{ p.add_once }} does for one delta.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.add_many_once }}`(
    IN p_write_id VARBINARY(64),
    IN p_deltas {{ p.deltas_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    {% call m::once_open(p, "''", false) %}{% endcall %}
        CALL `{{ p.add_many }}`(p_deltas);
        {% call m::once_close() %}{% endcall %}
END$$
