{% if p.bounds -%}
-- Errors are SQLSTATE '{{ p.refusal_state }}' with MYSQL_ERRNO {{ p.unknown_counter }} (unknown counter),
-- {{ p.already_exists }} (counter already exists), {{ p.invalid_argument }} (invalid argument) or {{ p.past_bound }} (the
-- counter's bound: the write would take its total past its floor or ceiling).
{%- else %}
-- Errors are SQLSTATE '{{ p.refusal_state }}' with MYSQL_ERRNO {{ p.unknown_counter }} (unknown counter),
-- {{ p.already_exists }} (counter already exists) or {{ p.invalid_argument }} (invalid argument).
{%- endif %}
-- Each routine's COMMENT is '{{ p.routine_mark }}' and a digest of its CREATE
-- statement, which `status` compares. MariaDB replaces each routine in
-- place (`/*M! OR REPLACE */`); MySQL drops it first (`/*!80000 DROP */`,
-- which MariaDB skips): a call in between fails with 1305, and
-- {{ p.grants_keeper }} gives back the grants the DROP revoked (1370 meanwhile).
-- Statements over one counter's slots name FORCE INDEX (PRIMARY): MariaDB
-- 11 would scan the whole index for a counter that holds most of the
-- table's rows, and lock other counters' slots.
DELIMITER $$
{% for (routine, body) in bodies %}
{{ body }}
/*!80000 CALL `{{ p.grants_keeper }}`('{{ routine.name }}') */$$
{% endfor %}
{{ triggers }}
DROP PROCEDURE `{{ p.grants_keeper }}`$$
SET @slotted_counters_grants = NULL$$
DELIMITER ;
