{%- import "_macros.sql" as m -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.add_once }}` */$$
-- {{ p.add }} with a write id p_write_id (16 random bytes the caller chose for
-- this write): adds p_delta to counter p_name once, however often it is
-- called with that id within the package's window. The id is recorded in the
-- delta's own transaction; a call whose id is recorded changes nothing and
-- succeeds. After a lost answer, call again with the same id.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.add_once }}`(
    IN p_write_id VARBINARY(64),
    IN p_name {{ p.name_type }},
    IN p_delta {{ p.number_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    {% call m::once_open(p, "p_name", true) %}{% endcall %}
        CALL `{{ p.add }}`(p_name, p_delta);
        {% call m::once_close() %}{% endcall %}
END$$
