/*!80000 DROP FUNCTION IF EXISTS `{{ p.routine(Routine::Package) }}` */$$
-- The package's mark, version and `generate` options (--features unless it
-- has all), read by `status`, the clients and the install probe.
CREATE /*M! OR REPLACE */ FUNCTION `{{ p.routine(Routine::Package) }}`()
RETURNS VARCHAR(1024) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin
DETERMINISTIC
NO SQL
COMMENT '{{ p.comment }}'
RETURN '{{ p.package_line }}'$$
