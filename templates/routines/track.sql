/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::Track) }}` */$$
-- Starts counting counter p_name per p_period ({% for period in p.periods %}{% if loop.last %} or {% else if !loop.first %}, {% endif %}'{{ period.name() }}'{% endfor %}), in
-- buckets that start at UTC boundaries (or where the period starts them
-- already), keeping the last p_keep buckets, the current one included
-- (NULL: all); p_keep 0 stops counting and drops its buckets. See
-- {{ p.routine(Routine::TrackAtOffset) }}, which it calls.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::Track) }}`(
    IN p_name {{ p.name_type }},
    IN p_period {{ p.name_type }},
    IN p_keep {{ p.number_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    CALL `{{ p.routine(Routine::TrackAtOffset) }}`(p_name, p_period, p_keep, NULL);
END$$
