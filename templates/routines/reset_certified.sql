{%- import "_macros.sql" as m -%}
{%- import "routines/_reset.sql" as reset -%}
{% call reset::drop_and_describe(p) %}{% endcall %}
-- The reset changes every slot twice, in a transaction of its own, like
-- DDL: it commits a transaction open on the connection.
{% call reset::signature(p) %}{% endcall %}
{% call m::end_left_open("    ") %}{% endcall %}
    BEGIN
{% call m::own_transaction("        ") %}{% endcall %}
        -- A multi-primary cluster ({{ p.cluster_name }}) certifies a
        -- transaction by the rows it changes, and this node may not yet have
        -- applied an increment another node has acknowledged: a slot still 0
        -- here would not change, and that increment would outlive the reset.
        -- Changing every slot first puts each in the write set, so the reset
        -- fails certification (error {{ p.certification_error }}) instead, and run again it
        -- sees the increment.
        UPDATE `{{ p.table }}` FORCE INDEX (PRIMARY) SET `counter` = IF(`counter` = 0, 1, 0) WHERE `counter_name` = p_name;
        IF ROW_COUNT() = 0 THEN
{% call m::unknown_counter("            ", p) %}{% endcall %}
        END IF;
        UPDATE `{{ p.table }}` FORCE INDEX (PRIMARY)
           SET `counter` = IF(`counter_id` = 1, v_value, 0),
               `start_date` = IF(p_reset_start_date IS TRUE, NOW(), `start_date`)
         WHERE `counter_name` = p_name;
{% call m::commit_own_transaction("        ") %}{% endcall %}
    END;
END$$
