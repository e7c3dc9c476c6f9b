-- One row per counter, for reports and for joins with application tables.
CREATE OR REPLACE VIEW `{{ p.names.totals_view }}` AS
SELECT `counter_name`,
       MAX(`description`) AS `description`,
       MIN(`start_date`) AS `start_date`,
       {{ p.slots.in_view }} AS `slots`,
       CAST(SUM(`counter`) AS SIGNED) AS `total`
FROM `{{ p.names.table }}`
GROUP BY `counter_name`;
