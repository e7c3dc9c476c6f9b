{%- import "_macros.sql" as m -%}
{%- import "routines/_bounds.sql" as bounds -%}
{#- What the batch routines share: the variables of the checks, the walk
    over the counters in collation order with every check of the batch, and,
    for the batches a trigger applies, the plan. -#}

{% macro check_variables(p) %}
    DECLARE v_length INT;
    -- The batch's names and its deltas, each a JSON array in the batch's order.
    DECLARE v_keys {{ p.types.deltas_type }};
    DECLARE v_values {{ p.types.deltas_type }};
    DECLARE v_key {{ p.types.name_type }};
    -- The name fetched before v_key, to find a name given twice.
    DECLARE v_previous {{ p.types.name_type }};
    -- The counter being summed: the first of the keys that collate equal.
    DECLARE v_counter {{ p.types.name_type }};
    DECLARE p_name {{ p.types.name_type }};
    DECLARE v_key_delta BIGINT;
    DECLARE v_delta BIGINT;
    DECLARE v_done BOOLEAN DEFAULT FALSE;
{%- endmacro %}

{#- Every counter of p_deltas in turn, in the order of their names: the
    batch's checks, then for each counter its name's and its deltas' checks,
    its slot, and the parts of `texts` the call block appends for it (a
    counter whose deltas sum to 0 has none). It begins with the cursor's
    declarations, so it follows the routine's own. -#}
{% macro each_counter(p, texts) %}
    DECLARE v_message {{ p.types.message_type }};
    -- Each name beside its delta (DISTINCT materializes the deltas for the
    -- join), by collation then code point, so two spellings of a name meet.
    -- Names are cut one past the longest allowed, which the check refuses.
    -- A delta is NULL unless a JSON integer within BIGINT, checked on its
    -- text: MySQL turns a larger one into a negative DECIMAL.
    DECLARE c_keys CURSOR FOR
        SELECT LEFT(JSON_UNQUOTE(entry.json), {{ p.types.name_length + 1 }}) AS name, number.delta
          FROM JSON_TABLE(v_keys, '$[*]' COLUMNS (position FOR ORDINALITY, json JSON PATH '$')) AS entry
          LEFT JOIN (
                SELECT DISTINCT value.position,
                       IF(COALESCE(JSON_TYPE(value.json) IN ('INTEGER', 'UNSIGNED INTEGER')
                                   AND value.json REGEXP '^-?[0-9]{1,19}$'
                                   AND CAST(CAST(value.json AS CHAR) AS DECIMAL(20))
                                       BETWEEN -9223372036854775808 AND 9223372036854775807, FALSE),
                          CAST(value.json AS SIGNED), NULL) AS delta
                  FROM JSON_TABLE(v_values, '$[*]' COLUMNS (position FOR ORDINALITY, json JSON PATH '$')) AS value
               ) AS number ON number.position = entry.position
         ORDER BY name COLLATE {{ p.types.collation }}, CAST(name AS BINARY);
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = TRUE;
    -- MySQL fails with 3157 on JSON nested over 100 deep; MariaDB: not valid.
    DECLARE EXIT HANDLER FOR 3157
    BEGIN
{% call m::refuse_text("        ", p, p.errors.invalid_argument) %}deltas must be a JSON object of counter names and integers{% endcall %}
    END;

    IF LENGTH(p_deltas) > {{ p.batches.bytes }} THEN
{% call m::refuse_text("        ", p, p.errors.invalid_argument) %}deltas are longer than {{ p.batches.bytes }} bytes{% endcall %}
    END IF;
    -- MySQL reads JSON only up to a NUL outside its strings, dropping what
    -- follows; valid JSON has none unescaped. Compared as code points: a _ci
    -- collation ignores NUL, and would find it anywhere.
    IF LOCATE(CHAR(0 USING {{ p.types.charset }}) COLLATE {{ p.types.charset }}_bin, p_deltas COLLATE {{ p.types.charset }}_bin) > 0
       OR NOT COALESCE(JSON_VALID(p_deltas) AND JSON_TYPE(p_deltas) = 'OBJECT', FALSE) THEN
{% call m::refuse_text("        ", p, p.errors.invalid_argument) %}deltas must be a JSON object of counter names and integers{% endcall %}
    END IF;
    SET v_length = JSON_LENGTH(p_deltas);
    IF v_length > {{ p.batches.limit }} THEN
{% call m::refuse_text("        ", p, p.errors.invalid_argument) %}deltas name more than {{ p.batches.limit }} counters{% endcall %}
    END IF;
    SET v_keys = JSON_KEYS(p_deltas), v_values = JSON_EXTRACT(p_deltas, '$.*');
    -- Names and deltas pair by position only if equally many: of a name
    -- given twice, MariaDB's JSON_KEYS keeps one, '$.*' both.
    IF v_length > 0 AND NOT COALESCE(JSON_LENGTH(v_keys) = v_length AND JSON_LENGTH(v_values) = v_length, FALSE) THEN
{% call m::refuse_text("        ", p, p.errors.invalid_argument) %}deltas name a counter twice{% endcall %}
    END IF;
{%- call m::find_position("    ", p) %}{% endcall %}

    -- Checks every name and delta and picks each slot; writes no table.
    OPEN c_keys;
    FETCH c_keys INTO v_key, v_key_delta;
    WHILE NOT v_done DO
        IF v_key IS NULL THEN
{% call m::refuse_text("            ", p, p.errors.invalid_argument) %}deltas must be a JSON object of counter names and integers{% endcall %}
        END IF;
        SET v_counter = v_key, v_delta = 0;
        WHILE NOT v_done AND v_key = v_counter DO
            SET p_name = v_key;
            -- A name spelled twice ("a", "\u0061"): MariaDB passes both on;
            -- MySQL's parser has kept the last.
            IF CAST(v_key AS BINARY) = CAST(v_previous AS BINARY) THEN
{% call m::refuse("                ", p, p.errors.invalid_argument) %}'deltas name a counter twice: ', QUOTE(v_key){% endcall %}
            END IF;

{%- if p.has.auto_create %}
{% call m::check_name("            ", p) %}{% endcall %}
{%- else %}
{% call m::check_name_form("            ", p) %}{% endcall %}
{%- endif %}
            IF v_key_delta IS NULL THEN
{% call m::refuse("                ", p, p.errors.invalid_argument) %}'delta must be an integer, for counter: ', QUOTE(v_key){% endcall %}
            END IF;
            SET v_delta = v_delta + v_key_delta, v_previous = v_key;
            FETCH c_keys INTO v_key, v_key_delta;
        END WHILE;
        SET p_name = v_counter;

{%- if !p.has.auto_create %}
{%- call find_slot_count(p) %}{% endcall %}
{%- endif %}
        IF v_delta <> 0 THEN
{% call m::pick_slot("            ", p) %}{% endcall %}
{%- if p.has.bounds && !p.has.auto_create %}
{% call bounds::look_before_locking("            ", p) %}{% endcall %}
{%- endif %}
            SET v_entries = v_entries + 1;

{%- call m::check_counter_limit("            ", p) %}{% endcall %}{{ caller() }}
{%- call gather_full_parts(p, texts) %}{% endcall %}
        END IF;
    END WHILE;
    CLOSE c_keys;
{%- call gather_last_parts(texts) %}{% endcall %}
{%- endmacro %}

{#- The counter's slot count, into v_slots (with a fixed count, a look that
    it exists): a look at its last slot, as in counter_add. SELECT ... INTO,
    because with binary logging a subquery in SET or IF locks the rows it
    reads. In a block of its own, whose NOT FOUND does not end the cursor. -#}
{% macro find_slot_count(p) %}
        BEGIN
            DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_slot = NULL;
            SET v_slot = NULL;
{% call m::read_slot_count("            ", p, "v_slot", false, p.classic_flag && p.has.bounds) %}{% endcall %}
        END;
        IF v_slot IS NULL THEN
{% call m::unknown_counter("            ", p) %}{% endcall %}
        END IF;
{%- if p.slots.fixed.is_none() %}
        SET v_slots = v_slot;
{%- endif %}
{%- endmacro %}

{#- The statement's texts grow by parts of up to p.batches.part entries:
    appending each entry to a whole text would copy all of it again every
    time, a cost that grows with the square of the batch. -#}
{% macro declare_parts(p, texts) %}
{%- for text in texts %}
    DECLARE {{ text }}_part {{ p.types.statement_type }} DEFAULT '';
{%- endfor %}
{%- endmacro %}

{#- Moves a full part into its text, every p.batches.part entries. -#}
{% macro gather_full_parts(p, texts) %}
            IF v_entries % {{ p.batches.part }} = 0 THEN
{%- for text in texts %}
                SET {{ text }} = CONCAT({{ text }}, {{ text }}_part), {{ text }}_part = '';
{%- endfor %}
            END IF;
{%- endmacro %}

{#- Moves the last parts into their texts. -#}
{% macro gather_last_parts(texts) %}
{%- for text in texts %}
    SET {{ text }} = CONCAT({{ text }}, {{ text }}_part);
{%- endfor %}
{%- endmacro %}

{#- The variables of `plan`. -#}
{% macro plan_variables(p) %}
{%- call check_variables(p) %}{% endcall %}
{%- if p.slots.fixed.is_none() %}
    DECLARE v_slots INT;
{%- endif %}
    DECLARE v_slot INT;
{% call m::declare_slot_count("    ") %}{% endcall %}
{%- if p.classic_flag && p.has.bounds %}
    DECLARE v_bounded BOOLEAN DEFAULT FALSE;
{%- endif %}
{%- call m::declare_position("    ", p) %}{% endcall %}
    DECLARE v_entries INT DEFAULT 0;
    -- The write's slots, `hex(name):slot:delta;` each.
    DECLARE v_plan {{ p.types.statement_type }} DEFAULT '';
{%- call declare_parts(p, ["v_plan"]) %}{% endcall %}
{%- endmacro %}

{#- Checks every name and delta of p_deltas and picks each counter's slot,
    into v_plan (v_entries entries) for the write-id trigger to apply;
    nothing is written yet. The body of the plan routine. -#}
{% macro plan(p) %}
{%- call each_counter(p, ["v_plan"]) %}
            SET v_plan_part = CONCAT(v_plan_part, HEX(p_name), ':', v_slot, ':', v_delta, ';');
{%- endcall %}
{%- endmacro %}

{#- A batch routine's plan, after its own variables: v_entries and v_plan
    from the plan routine, which checks the whole batch first. -#}
{% macro planned(p) %}
    DECLARE v_entries INT;
    DECLARE v_plan {{ p.types.statement_type }};
    CALL `{{ p.routine(Routine::PlanBatch) }}`(p_deltas, v_entries, v_plan);
{%- endmacro %}
