{%- import "routines/_bounds.sql" as bounds -%}
{%- import "routines/_periods.sql" as periods -%}
-- One row per slot; a counter is the sum of its slots. An increment writes one
-- slot, so increments rarely wait on one row lock. A re-install keeps counts.
CREATE TABLE IF NOT EXISTS `{{ p.names.table }}` (
    `counter_name` VARCHAR({{ p.types.name_length }}) NOT NULL COMMENT 'compared in the table collation',
    `counter_id` SMALLINT UNSIGNED NOT NULL COMMENT 'slot number, 1 to the slot count',
    `description` VARCHAR({{ p.types.description_length }}) NULL,
    `start_date` DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP COMMENT 'when counting started',
    `counter` BIGINT NOT NULL DEFAULT 0 COMMENT 'signed: a decrement may take one slot below 0',
{%- if p.has.bounds %}
{%- call bounds::columns("'", false) %}{% endcall %}
{%- endif %}
{%- if p.has.periods %}
    {% call periods::untracked_column(p, "'", false) %}{% endcall %}
{%- endif %}
    PRIMARY KEY (`counter_name`, `counter_id`)
) ENGINE=InnoDB DEFAULT CHARSET={{ p.types.charset }} COLLATE={{ p.types.collation }};
