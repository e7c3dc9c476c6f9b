-- Routines and triggers are parsed and run in the sql_mode they are created
-- in: the script pins one, whatever the session's, until its end.
SET {{ p.install.installer_sql_mode }} = @@SESSION.sql_mode,
    SESSION sql_mode = '{{ p.install.routine_sql_mode }}';
