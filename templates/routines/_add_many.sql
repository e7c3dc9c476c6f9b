{%- import "_macros.sql" as m -%}
{#- What both counter_add_many bodies share: the variables of the checks,
    the cursor over the names in collation order with the checks of the
    batch, and the check and sum of one name's delta. -#}

{% macro check_variables(p) %}
    DECLARE v_keys {{ p.deltas_type }};
    DECLARE v_key {{ p.name_type }};
    -- The counter being summed: the first of the keys that collate equal.
    DECLARE v_counter {{ p.name_type }};
    -- The name being checked; named like counter_add's parameter, so the
    -- shared checks and messages apply.
    DECLARE p_name {{ p.name_type }};
    DECLARE v_text {{ p.deltas_type }};
    DECLARE v_delta BIGINT;
    DECLARE v_done BOOLEAN DEFAULT FALSE;
{%- endmacro %}

{#- From the message variable to the first name of the first counter. -#}
{% macro open_batch(p) %}
    DECLARE v_message {{ p.message_type }};
    -- The names in the order of the package's collation.
    DECLARE c_keys CURSOR FOR
        WITH digit (d) AS ({{ p.batch_numbers.digits }})
        SELECT JSON_UNQUOTE(JSON_EXTRACT(v_keys, CONCAT('$[', entry.id - 1, ']'))) AS name
          FROM (SELECT {{ p.batch_numbers.number }} AS id FROM {{ p.batch_numbers.tables }}) AS entry
         WHERE entry.id <= JSON_LENGTH(v_keys)
         ORDER BY name COLLATE {{ p.collation }};
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = TRUE;

    IF p_deltas IS NULL OR NOT JSON_VALID(p_deltas) OR JSON_TYPE(p_deltas) <> 'OBJECT' THEN
        SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = {{ p.invalid_argument }},
            MESSAGE_TEXT = 'deltas must be a JSON object of counter names and integers';
    END IF;
    IF JSON_LENGTH(p_deltas) > {{ p.batch_limit }} THEN
        SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = {{ p.invalid_argument }},
            MESSAGE_TEXT = 'deltas name more than {{ p.batch_limit }} counters';
    END IF;
    SET v_keys = JSON_KEYS(p_deltas);
{%- call m::find_position("    ", p) %}{% endcall %}

    -- Checks every name and delta, picks each counter's slot, and writes the
    -- statement's parts; nothing is written to the table yet.
    OPEN c_keys;
    FETCH c_keys INTO v_key;
    WHILE NOT v_done DO
        SET v_counter = v_key, v_delta = 0;
        WHILE NOT v_done AND v_key = v_counter DO
            SET p_name = v_key;
{%- endmacro %}

{#- After the name's own check: its delta, added to its counter's. -#}
{% macro sum_delta(p) %}
            SET v_text = JSON_EXTRACT(p_deltas, CONCAT('$.', JSON_QUOTE(v_key)));
            IF JSON_TYPE(v_text) <> 'INTEGER' OR v_text NOT REGEXP '^-?[0-9]{1,19}$'
               OR CAST(CAST(v_text AS SIGNED) AS CHAR CHARACTER SET {{ p.charset }}) COLLATE {{ p.collation }} <> v_text THEN
                SET v_message = LEFT(CONCAT('delta must be an integer, for counter: ', QUOTE(v_key)), 128);
                SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = {{ p.invalid_argument }}, MESSAGE_TEXT = v_message;
            END IF;
            SET v_delta = v_delta + CAST(v_text AS SIGNED);
            FETCH c_keys INTO v_key;
        END WHILE;
        SET p_name = v_counter;
{%- endmacro %}

{#- A counter with a delta: its slot, and one more entry. -#}
{% macro next_entry(p) %}
        IF v_delta <> 0 THEN
{% call m::pick_slot("            ", p) %}{% endcall %}
            SET v_entries = v_entries + 1;
{%- endmacro %}
