-- Each routine and trigger runs in the sql_mode of the session that created
-- it, and is parsed in it: from here on this script creates them in one
-- mode, whatever the installing session's, and gives the session its own
-- back at its end.
SET {{ p.installer_sql_mode }} = @@SESSION.sql_mode,
    SESSION sql_mode = '{{ p.routine_sql_mode }}';
