{% if p.bounds -%}
-- Errors are SQLSTATE '{{ p.refusal_state }}' with MYSQL_ERRNO {{ p.unknown_counter }} (unknown counter),
-- {{ p.already_exists }} (counter already exists), {{ p.invalid_argument }} (invalid argument) or {{ p.past_bound }} (the
-- counter's bound: the write would take its total past its floor or ceiling).
{%- else %}
-- Errors are SQLSTATE '{{ p.refusal_state }}' with MYSQL_ERRNO {{ p.unknown_counter }} (unknown counter),
-- {{ p.already_exists }} (counter already exists) or {{ p.invalid_argument }} (invalid argument).
{%- endif %}
-- Each routine's COMMENT is '{{ p.routine_mark }}' and a digest of its CREATE
-- statement: `status` tells this package's routines from others' by it.
-- {{ p.routine(Routine::Package) }}() says which version and options made the package.
-- Each routine is replaced in place: MariaDB runs `/*M! OR REPLACE */`, so
-- calls made during a reinstall never fail. MySQL has no CREATE OR REPLACE
-- for routines: it runs the `/*!80000 DROP ... */` before each CREATE
-- (MariaDB skips version comments from 50700 to 99999), and a call in the
-- moment between the two fails with 1305. A DROP also revokes the grants on
-- the routine: right after each CREATE, {{ p.grants_keeper }} grants again what
-- accounts held on it (1370 meanwhile).
-- Statements over all of one counter's slots name FORCE INDEX (PRIMARY):
-- MariaDB 11's cost model scans the whole index for a counter that holds
-- most of the table's rows, and so locks other counters' slots. Reads that
-- decide a write lock what they read (FOR UPDATE): under MariaDB's snapshot
-- isolation a plain read opens a view that fails the write (1020): inside
-- a caller's transaction there, the read of the slot count locks slot 2
-- and the last, shared, until commit.
DELIMITER $$
{% for (routine, body) in bodies %}
{{ body }}
/*!80000 CALL `{{ p.grants_keeper }}`('{{ routine.kind }}', '{{ routine.name }}') */$$
{% endfor %}
{{ triggers }}
DROP PROCEDURE `{{ p.grants_keeper }}`$$
SET @slotted_counters_grants = NULL$$
DELIMITER ;
