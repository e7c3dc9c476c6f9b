
-- The installing session's own sql_mode again.
SET SESSION sql_mode = {{ p.installer_sql_mode }};
