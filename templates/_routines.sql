-- Errors are SQLSTATE '45000' with MYSQL_ERRNO {{ p.unknown_counter }} (unknown counter),
-- {{ p.already_exists }} (counter already exists) or {{ p.invalid_argument }} (invalid argument).
DELIMITER $$

{% include "routines/setup.sql" %}

{% include "routines/add.sql" %}

{% include "routines/increment.sql" %}

{% include "routines/reset.sql" %}
{%- if p.has_resize %}

{% include "routines/resize.sql" %}
{%- endif %}

{% include "routines/compact.sql" %}

{% include "routines/delete.sql" %}

{% include "routines/get.sql" %}

{% include "routines/estimate.sql" %}

DELIMITER ;
