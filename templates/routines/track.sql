/*!80000 DROP PROCEDURE IF EXISTS `{{ p.routine(Routine::Track) }}` */$$
-- Counts counter p_name per p_period ({% for period in p.periods.all %}{% if loop.last %} or {% else if !loop.first %}, {% endif %}'{{ period.name() }}'{% endfor %}),
-- keeping the last p_keep buckets (NULL: all; 0: stops and drops them), at
-- UTC boundaries or where they start already: see {{ p.routine(Routine::TrackAtOffset) }}.
CREATE /*M! OR REPLACE */ PROCEDURE `{{ p.routine(Routine::Track) }}`(
    IN p_name {{ p.types.name_type }},
    IN p_period {{ p.types.name_type }},
    IN p_keep {{ p.types.number_type }}
)
MODIFIES SQL DATA
COMMENT '{{ p.comment }}'
BEGIN
    CALL `{{ p.routine(Routine::TrackAtOffset) }}`(p_name, p_period, p_keep, NULL);
END$$
