-- plain_statements.sql: every statement the client's plain mode sends, with
-- its parameters, for applications in other languages that count without
-- routines. A reference, not a script to run.
{% include "_header.sql" %}
--
-- Each statement names one counter by equality on `counter_name`, so Vitess
-- routes it to the shard of that name, and is sent as a prepared statement.
-- The checks the routines make are the caller's, each refused with error
-- 9003 (SQLSTATE 23000; docs/plain-sql.md gives the messages). A name has
-- at most {{ p.types.name_length }} characters, and no control character (U+0000-U+001F,
-- U+007F-U+009F); no character the collation ({{ p.types.collation }}) ignores, which
-- would make two names one counter:
{%- match ignored %}{% when Some(ignored) %}
-- {{ ignored }};
{%- when None %}
-- those whose WEIGHT_STRING is empty on the server;
{%- endmatch %}
-- and it does not end with a space, nor with a character the collation
-- takes for one:
{%- match spaces %}{% when Some(spaces) %}
-- {{ spaces }}.
{%- when None %}
-- ask the server (a name and the name with it at the end compare equal).
{%- endmatch %}
{%- if let Some(folded) = folded %}
-- Names the collation folds together are one counter, checks or not:
-- {{ folded }}.
{%- endif %}
-- Deltas and values are within {{ p.slots.bound }} either way (the bound: the most
-- a slot holds either way); {% if let Some(slots) = p.slots.fixed %}a setup's slot count is {{ slots }} (fixed){% else %}slot counts are from 1 to {{ p.slots.max }}{% endif %}.
-- An increment picks its slot at random among the counter's slot count
-- (last_slot; the Rust client keeps it for {{ slot_count_lifetime }} s); when the slot is gone (a shrink removed it)
-- the delta goes to slot 1. A batch of several counters runs the add of each,
-- in the order of their names, in one transaction; delete and a lazy reset
-- run lock_counter first in theirs. counter_resize and counter_compact have
-- no plain form yet: each rewrites a counter's slots under lock in several
-- statements; the plain mode neither offers nor needs them to count.
-- Counting per period: before each write, read the counter's periods; when
-- it tracks none, the write is as above. Else run the write (each counter of
-- a batch) and add_to_buckets for its tracked periods, with the slot it
-- wrote, in one transaction. A late write (a moment given) reads server_now
-- first: a moment after it is refused (9003), and a period whose last `keep`
-- buckets started after the moment's is left out. track and untrack drop a
-- period's buckets with oldest_buckets and drop_buckets, a short statement
-- at a time; the expire statements drop what each period no longer keeps.
-- Bounded counters: a slot holds its share of the counter's floor and
-- ceiling (lowest, highest) and add_to_slot keeps it within them. A write
-- neither its slot nor slot 1 takes goes, in a transaction, through
-- lock_counter: with no bound, slot 1 once more; else the total plus the
-- delta, refused past a bound (9004, with the room lock_counter's total
-- leaves), is written by spread. A reset of a bounded counter, and bound
-- (counter_bound: the total checked against the new bounds, then spread, or
-- unbound for none), go the same way.
{%- for statement in statements %}

-- {{ statement.name }}: {{ statement.purpose }}
-- Parameters: {% if statement.params.is_empty() %}none{% else %}{{ statement.params }}{% endif %}
{{ statement.sql }};
{%- endfor %}
