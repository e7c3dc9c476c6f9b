{#- The unknown-counter error, at the indentation of the block it ends. -#}
{% macro unknown_counter(indent, p) -%}
{{ indent }}SET v_message = LEFT(CONCAT('unknown counter: ', QUOTE(p_name)), 128);
{{ indent }}SIGNAL SQLSTATE '{{ p.refusal_state }}' SET MYSQL_ERRNO = {{ p.unknown_counter }}, MESSAGE_TEXT = v_message;
{%- endmacro %}

{#- The invalid-argument error for a name longer than the column: a
    non-strict session may have cut it, and it must not reach another counter. -#}
{% macro check_name_length(indent, p) -%}
{{ indent }}IF CHAR_LENGTH(p_name) > {{ p.name_length }} THEN
{{ indent }}    SET v_message = LEFT(CONCAT('counter name is longer than {{ p.name_length }} characters: ', QUOTE(p_name)), 128);
{{ indent }}    SIGNAL SQLSTATE '{{ p.refusal_state }}' SET MYSQL_ERRNO = {{ p.invalid_argument }}, MESSAGE_TEXT = v_message;
{{ indent }}END IF;
{%- endmacro %}

{#- The invalid-argument errors of a name a row is created for: NULL, blank
    or too long. -#}
{% macro check_name(indent, p) -%}
{{ indent }}IF p_name IS NULL OR CHAR_LENGTH(TRIM(p_name)) = 0 THEN
{{ indent }}    SIGNAL SQLSTATE '{{ p.refusal_state }}' SET MYSQL_ERRNO = {{ p.invalid_argument }},
{{ indent }}        MESSAGE_TEXT = 'counter name must not be NULL or empty';
{{ indent }}END IF;
{% call check_name_length(indent, p) %}{% endcall %}
{%- endmacro %}

{#- A function's answer for a name longer than the column: no counter. -#}
{% macro null_if_too_long(p) -%}
    IF CHAR_LENGTH(p_name) > {{ p.name_length }} THEN
        RETURN NULL;
    END IF;
{%- endmacro %}

{#- Inserts `count` slot rows of counter p_name in one statement, numbered
    `id` (from slot.id = 1), with `values` for the other columns. -#}
{% macro slot_rows(indent, p, id, values, count) -%}
{{ indent }}INSERT INTO `{{ p.table }}` (`counter_name`, `counter_id`, `description`, `start_date`, `counter`)
{{ indent }}WITH digit (d) AS ({{ p.slot_numbers.digits }})
{{ indent }}SELECT p_name, {{ id }}, {{ values }}
{{ indent }}FROM (SELECT {{ p.slot_numbers.number }} AS id FROM {{ p.slot_numbers.tables }}) AS slot
{{ indent }}WHERE slot.id <= {{ count }};
{%- endmacro %}

{#- A routine's own transaction: an error rolls back all of it, then goes to
    the caller. START TRANSACTION commits a transaction the caller had open. -#}
{% macro own_transaction(indent) -%}
{{ indent }}DECLARE EXIT HANDLER FOR SQLEXCEPTION
{{ indent }}BEGIN
{{ indent }}    ROLLBACK;
{{ indent }}    RESIGNAL;
{{ indent }}END;

{{ indent }}START TRANSACTION;
{%- endmacro %}

{#- The variables of a Group Replication member's position, beside v_slot. -#}
{% macro declare_position(indent, p) -%}
{%- if p.group_members.is_some() %}
{{ indent }}DECLARE v_position INT;
{{ indent }}DECLARE v_members INT;
{%- endif %}
{%- endmacro %}

{#- For Group Replication, once per call: the member's position among the
    group's members, in the order of their server UUIDs, and their number.
    The group's auto_increment_offset is the server id, and ids such as 1,
    8 and 15 are equal modulo the increment (7): a rank is never shared. A
    server in no group sees itself alone, or nobody: position 1 of 1. -#}
{% macro find_position(indent, p) -%}
{%- if let Some(members) = p.group_members %}
{{ indent }}SELECT COALESCE(SUM(`MEMBER_ID` < @@GLOBAL.server_uuid), 0) + 1, GREATEST(COUNT(*), 1)
{{ indent }}  INTO v_position, v_members
{{ indent }}  FROM {{ members }};
{%- endif %}
{%- endmacro %}

{#- Sets v_slot to the slot an increment adds to, among p.slot_count slots
    (a number, or v_slots). For node slots: first the node's position p in a
    cluster of k, then one of p, p + k, p + 2k, ... at random. Galera keeps
    auto_increment_offset at the position and auto_increment_increment at
    the size (an offset above the increment counts modulo the increment);
    Group Replication's come from find_position. A counter with fewer slots
    than p gets slot (p - 1) % slots + 1, shared with fewer nodes than any
    random pick. -#}
{% macro pick_slot(indent, p) -%}
{% match p.slot_choice -%}
{% when SlotChoice::Random -%}
{{ indent }}SET v_slot = FLOOR(RAND() * {{ p.slot_count }}) + 1;
{%- when SlotChoice::Connection -%}
{{ indent }}SET v_slot = CONNECTION_ID() % {{ p.slot_count }} + 1;
{%- when SlotChoice::Node -%}
{{ indent }}SET v_slot = {{ p.node_position }};
{{ indent }}SET v_slot = IF(v_slot <= {{ p.slot_count }},
{{ indent }}    v_slot + {{ p.node_count }} * FLOOR(RAND() * (FLOOR(({{ p.slot_count }} - v_slot) / {{ p.node_count }}) + 1)),
{{ indent }}    (v_slot - 1) % {{ p.slot_count }} + 1);
{%- endmatch %}
{%- endmacro %}

{#- Whether a numeric argument is a whole number within BIGINT; NULL for
    NULL. Numeric parameters are DECIMAL, so that a fraction (a JavaScript
    number reaches the server as a DOUBLE) meets this check instead of being
    rounded on the way in. -#}
{% macro is_bigint(value) -%}
({{ value }} = TRUNCATE({{ value }}, 0) AND {{ value }} BETWEEN -9223372036854775808 AND 9223372036854775807)
{%- endmacro %}
