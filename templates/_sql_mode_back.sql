
-- The installing session's own sql_mode again.
SET SESSION sql_mode = {{ p.install.installer_sql_mode }};
