{#- The unknown-counter error, at the indentation of the block it ends. -#}
{% macro unknown_counter(indent, p) -%}
{{ indent }}SET v_message = LEFT(CONCAT('unknown counter: ', QUOTE(p_name)), 128);
{{ indent }}SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = {{ p.unknown_counter }}, MESSAGE_TEXT = v_message;
{%- endmacro %}

{#- The invalid-argument errors for a NULL, blank or too long counter name. -#}
{% macro check_name(indent, p) -%}
{{ indent }}IF p_name IS NULL OR CHAR_LENGTH(TRIM(p_name)) = 0 THEN
{{ indent }}    SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = {{ p.invalid_argument }},
{{ indent }}        MESSAGE_TEXT = 'counter name must not be NULL or empty';
{{ indent }}END IF;
{{ indent }}IF CHAR_LENGTH(p_name) > {{ p.name_length }} THEN
{{ indent }}    SET v_message = LEFT(CONCAT('counter name is longer than {{ p.name_length }} characters: ', QUOTE(p_name)), 128);
{{ indent }}    SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = {{ p.invalid_argument }}, MESSAGE_TEXT = v_message;
{{ indent }}END IF;
{%- endmacro %}
