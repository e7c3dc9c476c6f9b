{% if p.has.bounds -%}
-- Errors are SQLSTATE '{{ p.errors.sqlstate }}' with MYSQL_ERRNO {{ p.errors.unknown_counter }} (unknown counter),
-- {{ p.errors.already_exists }} (counter already exists), {{ p.errors.invalid_argument }} (invalid argument) or {{ p.errors.past_bound }} (a write
-- would pass a counter's floor or ceiling{% if p.has.periods %}, or a period's limit{% endif %}).
{%- else if p.has.periods %}
-- Errors are SQLSTATE '{{ p.errors.sqlstate }}' with MYSQL_ERRNO {{ p.errors.unknown_counter }} (unknown counter),
-- {{ p.errors.already_exists }} (counter already exists), {{ p.errors.invalid_argument }} (invalid argument) or {{ p.errors.past_bound }} (a write
-- would pass a period's limit).
{%- else %}
-- Errors are SQLSTATE '{{ p.errors.sqlstate }}' with MYSQL_ERRNO {{ p.errors.unknown_counter }} (unknown counter),
-- {{ p.errors.already_exists }} (counter already exists) or {{ p.errors.invalid_argument }} (invalid argument).
{%- endif %}
-- Each routine's COMMENT is '{{ p.install.routine_mark }}' and a digest of its CREATE
-- statement, which `status` compares. MariaDB replaces a routine in place;
-- MySQL drops it first (a call in between fails with 1305), and
-- {{ p.install.grants_keeper }} gives its grants back. Statements over one counter's
-- slots use FORCE INDEX (PRIMARY): else MariaDB 11 may scan the whole index
-- for a counter holding most rows, and lock other counters' slots.
DELIMITER $$
{% for (routine, body) in bodies %}
{{ body }}
/*!80000 CALL `{{ p.install.grants_keeper }}`('{{ routine.name }}') */$$
{% endfor %}
{{ triggers }}
DROP PROCEDURE `{{ p.install.grants_keeper }}`$$
SET @slotted_counters_grants = NULL$$
DELIMITER ;
