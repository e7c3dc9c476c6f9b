
-- The installing session's own sql_mode, back.
SET SESSION sql_mode = {{ p.installer_sql_mode }};
