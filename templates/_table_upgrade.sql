{%- import "routines/_bounds.sql" as bounds -%}
-- A table made before bounded counters gains their two columns, last, which
-- both servers add in place without copying the table. MySQL has no ADD
-- COLUMN IF NOT EXISTS: the ALTER runs only when the table lacks them.
SET @slotted_counters_upgrade = (
    SELECT IF(COUNT(*) = 0, 'ALTER TABLE `{{ p.table }}`
{%- call bounds::columns("''", true) %}{% endcall %}', 'DO 0')
      FROM information_schema.COLUMNS
     WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '{{ p.table }}' AND COLUMN_NAME = 'lowest');
PREPARE slotted_counters_upgrade FROM @slotted_counters_upgrade;
EXECUTE slotted_counters_upgrade;
DEALLOCATE PREPARE slotted_counters_upgrade;
SET @slotted_counters_upgrade = NULL;
