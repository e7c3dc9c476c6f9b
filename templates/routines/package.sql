/*!80000 DROP FUNCTION IF EXISTS `{{ p.routine(Routine::Package) }}` */$$
-- Which package this is, in one line: '{{ p.routine_mark }}', its version and the
-- options of `generate` that made it, --features among them unless it has
-- every feature. `status` and the clients read it to tell a feature the
-- database lacks from a routine a re-install is replacing.
CREATE /*M! OR REPLACE */ FUNCTION `{{ p.routine(Routine::Package) }}`()
RETURNS VARCHAR(1024) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin
DETERMINISTIC
NO SQL
COMMENT '{{ p.comment }}'
RETURN '{{ p.package_line }}'$$
