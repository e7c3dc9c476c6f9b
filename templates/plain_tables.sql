-- plain_tables.sql: the `{{ p.names.table }}` table, its write ids, periods and buckets, for the client's plain
-- mode on engines that run no stored routine (PlanetScale, Vitess, TiDB) and
-- on sharding engines (MariaDB Spider). Install with: mysql your_database < plain_tables.sql
{% include "_header.sql" %}
--
-- No routine and no trigger (PlanetScale refuses both), and no view: views
-- over a sharded table were not checked on these engines; a report sums
-- a counter's slots with SUM ... WHERE `counter_name` = ?. The plain mode's
-- statements (plain_statements.sql) keep every slot within {{ p.slots.bound }}
-- either way, as the triggers of setup.sql do for the routines. The table is
-- the one setup.sql creates, so routines and plain statements may share it.

{% include "_table.sql" %}

-- A table made before bounded counters lacks their two columns: add them once,
-- last (both servers add them in place, without copying the table), as
-- setup.sql does:
--   ALTER TABLE `{{ p.names.table }}` ADD COLUMN `lowest` BIGINT NULL, ADD COLUMN `highest` BIGINT NULL;
-- And one made before `untracked` lacks it, which the plain mode's track clears
-- (FALSE: the routines' writes of the counter look at its periods):
--   ALTER TABLE `{{ p.names.table }}` ADD COLUMN `untracked` BOOLEAN NOT NULL DEFAULT FALSE;
-- Periods and buckets made before limits per period and offsets from UTC
-- lack these, which the plain mode's statements name:
--   ALTER TABLE `{{ p.names.periods_table }}` ADD COLUMN `highest` BIGINT NULL, ADD COLUMN `utc_offset` SMALLINT NOT NULL DEFAULT 0;
--   ALTER TABLE `{{ p.names.buckets_table }}` ADD COLUMN `highest` BIGINT NULL;

{% include "_writes_table.sql" %}

{% include "_periods_tables.sql" %}
