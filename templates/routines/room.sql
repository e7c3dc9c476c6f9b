{%- import "_macros.sql" as m -%}
{%- import "routines/_periods.sql" as periods -%}
/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::Room) }}` */$$
-- One row per bound and limit of counter p_name: `kind` ('floor',
-- 'ceiling' or 'limit'), `period` (NULL for a bound of the total), `bound`
-- (its value), `value` (the total, or what the current bucket counted),
-- `room` (how far a write may still move the value toward the bound), and
-- `resets_at` (the UTC moment the current bucket ends, as text in the
-- form a refusal writes it; NULL for a bound).
-- A read: it locks nothing and refuses nothing but a name no counter has.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::Room) }}`(
    IN p_name {{ p.name_type }}
)
READS SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    DECLARE v_message {{ p.message_type }};

{% call m::check_name_form("    ", p) %}{% endcall %}
    IF NOT EXISTS (SELECT 1 FROM `{{ p.table }}` WHERE `counter_name` = p_name) THEN
{% call m::unknown_counter("        ", p) %}{% endcall %}
    END IF;
{%- if p.bounds %}
    SELECT `kind`, `period`, `bound`, `value`, `room`, `resets_at`
      FROM (SELECT 'floor' AS `kind`, CAST(NULL AS CHAR(6)) AS `period`, `floor` AS `bound`, `total` AS `value`,
                   CAST(`total` - `floor` AS SIGNED) AS `room`, CAST(NULL AS CHAR(19)) AS `resets_at`, 1 AS `place`
              FROM (SELECT CAST(SUM(`counter`) AS SIGNED) AS `total`,
                           CAST(IF(COUNT(`lowest`) = COUNT(*), SUM(`lowest`), NULL) AS SIGNED) AS `floor`,
                           CAST(IF(COUNT(`highest`) = COUNT(*), SUM(`highest`), NULL) AS SIGNED) AS `ceiling`
                      FROM `{{ p.table }}` WHERE `counter_name` = p_name) AS `bounds`
             WHERE `floor` IS NOT NULL
            UNION ALL
            SELECT 'ceiling', NULL, `ceiling`, `total`, CAST(`ceiling` - `total` AS SIGNED), NULL, 2
              FROM (SELECT CAST(SUM(`counter`) AS SIGNED) AS `total`,
                           CAST(IF(COUNT(`highest`) = COUNT(*), SUM(`highest`), NULL) AS SIGNED) AS `ceiling`
                      FROM `{{ p.table }}` WHERE `counter_name` = p_name) AS `bounds`
             WHERE `ceiling` IS NOT NULL
            UNION ALL
{%- else %}
    SELECT `kind`, `period`, `bound`, `value`, `room`, `resets_at`
      FROM (
{%- endif %}
            SELECT 'limit' AS `kind`, `limits`.`period` AS `period`, `limits`.`highest` AS `bound`,
                   CAST(COALESCE(SUM(`b`.`counter`), 0) AS SIGNED) AS `value`,
                   CAST(GREATEST(`limits`.`highest` - COALESCE(SUM(`b`.`counter`), 0), 0) AS SIGNED) AS `room`,
                   DATE_FORMAT({% call periods::bucket_end(p, "`limits`.`period`", "`limits`.`current`", "`limits`.`utc_offset`") %}{% endcall %}, '%Y-%m-%d %H:%i:%s') AS `resets_at`,
                   2 + `limits`.`period` AS `place`
              FROM (SELECT `period`, `highest`, `utc_offset`,
                           {% call periods::bucket_start(p, "`period`", "UTC_TIMESTAMP()", "`utc_offset`") %}{% endcall %} AS `current`
                      FROM `{{ p.periods_table }}`
                     WHERE `counter_name` = p_name AND `highest` IS NOT NULL) AS `limits`
              LEFT JOIN `{{ p.buckets_table }}` AS `b`
                ON `b`.`counter_name` = p_name AND `b`.`period` = `limits`.`period`
               AND `b`.`bucket_start` = `limits`.`current`
             GROUP BY `limits`.`period`, `limits`.`highest`, `limits`.`utc_offset`, `limits`.`current`
           ) AS `rows`
     ORDER BY `place`;
END$$
