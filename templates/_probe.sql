-- Before anything changes: an account that may not create functions (error
-- 1419 with binary logging on and no SUPER, or no CREATE ROUTINE) stops
-- here, leaving an installed package whole.
DROP FUNCTION IF EXISTS `{{ p.probe }}`;
CREATE FUNCTION `{{ p.probe }}`() RETURNS INT NO SQL RETURN 1;
DROP FUNCTION `{{ p.probe }}`;
{%- if let Some(members) = p.group_members %}
-- The routines find their member's position in the group as their definer,
-- in {{ members }}: a server without it
-- (MariaDB: use --cluster galera there) or an account that may not read it
-- stops here too.
DO (SELECT COUNT(*) FROM {{ members }});
{%- endif %}
