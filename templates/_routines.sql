{% if p.bounds -%}
-- Errors are SQLSTATE '{{ p.refusal_state }}' with MYSQL_ERRNO {{ p.unknown_counter }} (unknown counter),
-- {{ p.already_exists }} (counter already exists), {{ p.invalid_argument }} (invalid argument) or {{ p.past_bound }} (a write
-- would pass a counter's floor or ceiling{% if p.periods_feature %}, or a period's limit{% endif %}).
{%- else if p.periods_feature %}
-- Errors are SQLSTATE '{{ p.refusal_state }}' with MYSQL_ERRNO {{ p.unknown_counter }} (unknown counter),
-- {{ p.already_exists }} (counter already exists), {{ p.invalid_argument }} (invalid argument) or {{ p.past_bound }} (a write
-- would pass a period's limit).
{%- else %}
-- Errors are SQLSTATE '{{ p.refusal_state }}' with MYSQL_ERRNO {{ p.unknown_counter }} (unknown counter),
-- {{ p.already_exists }} (counter already exists) or {{ p.invalid_argument }} (invalid argument).
{%- endif %}
-- Each routine's COMMENT is '{{ p.routine_mark }}' and a digest of its CREATE
-- statement, which `status` compares. MariaDB replaces a routine in place;
-- MySQL drops it first (a call in between fails with 1305), and
-- {{ p.grants_keeper }} gives its grants back. Statements over one counter's
-- slots use FORCE INDEX (PRIMARY): else MariaDB 11 may scan the whole index
-- for a counter holding most rows, and lock other counters' slots.
DELIMITER $$
{% for (routine, body) in bodies %}
{{ body }}
/*!80000 CALL `{{ p.grants_keeper }}`('{{ routine.name }}') */$$
{% endfor %}
{{ triggers }}
DROP PROCEDURE `{{ p.grants_keeper }}`$$
SET @slotted_counters_grants = NULL$$
DELIMITER ;
