{%- import "routines/_periods.sql" as periods -%}
-- One row per bound and limit of every counter, led by its name: what
-- {{ p.routine(Routine::Room) }} returns for one counter, for a dashboard. It computes every
-- counter's rows before a WHERE on counter_name picks some: a call of
-- {{ p.routine(Routine::Room) }} reads one counter's.
CREATE OR REPLACE VIEW `{{ p.rooms_view }}` AS
SELECT `counter_name`, `kind`, `period`, `bound`, `value`, `room`, `resets_at`
  FROM ({% call periods::room_rows(p, "", "        ") %}{% endcall %}
       ) AS `rows`;
