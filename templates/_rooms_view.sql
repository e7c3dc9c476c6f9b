{%- import "routines/_periods.sql" as periods -%}
-- {{ p.routine(Routine::Room) }}'s rows for every counter, for dashboards. A WHERE on
-- counter_name still computes every counter's first: {{ p.routine(Routine::Room) }} reads one.
CREATE OR REPLACE VIEW `{{ p.names.rooms_view }}` AS
SELECT `counter_name`, `kind`, `period`, `bound`, `value`, `room`, `resets_at`
  FROM ({% call periods::room_rows(p, "", "        ") %}{% endcall %}
       ) AS `rows`;
