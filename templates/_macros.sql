{#- Refuses the call with error `errno` and the message the call block
    writes as CONCAT's arguments, cut to the routines' message length, as
    the client cuts its own refusals (core's names::refusal). -#}
{% macro refuse(indent, p, errno) -%}
{{ indent }}SET v_message = LEFT(CONCAT({{ caller() }}), {{ p.errors.message_length }});
{{ indent }}SIGNAL SQLSTATE '{{ p.errors.sqlstate }}' SET MYSQL_ERRNO = {{ errno }}, MESSAGE_TEXT = v_message;
{%- endmacro %}

{#- Refuses the call with error `errno` and the fixed message the call
    block writes. -#}
{% macro refuse_text(indent, p, errno) -%}
{{ indent }}SIGNAL SQLSTATE '{{ p.errors.sqlstate }}' SET MYSQL_ERRNO = {{ errno }},
{{ indent }}    MESSAGE_TEXT = '{{ caller() }}';
{%- endmacro %}

{#- The unknown-counter error, at the indentation of the block it ends. -#}
{% macro unknown_counter(indent, p) -%}
{% call refuse(indent, p, p.errors.unknown_counter) %}'{{ refusals::UNKNOWN_COUNTER }}: ', QUOTE(p_name){% endcall %}
{%- endmacro %}

{#- The invalid-argument error of a name no counter may have, in the
    name check's words: asked only of a name that may have a problem. -#}
{% macro check_name_form(indent, p) -%}
{{ indent }}IF CHAR_LENGTH(p_name) > {{ p.types.name_length }} OR {% call unusual_characters(p) %}{% endcall %} THEN
{{ indent }}    SET v_message = LEFT(CONCAT(`{{ p.routine(Routine::NameProblem) }}`(p_name), ': ', QUOTE(p_name)), {{ p.errors.message_length }});
{{ indent }}    IF v_message IS NOT NULL THEN
{{ indent }}        SIGNAL SQLSTATE '{{ p.errors.sqlstate }}' SET MYSQL_ERRNO = {{ p.errors.invalid_argument }}, MESSAGE_TEXT = v_message;
{{ indent }}    END IF;
{{ indent }}END IF;
{%- endmacro %}

{#- The invalid-argument errors of a name a row is created for: NULL, blank,
    or not of the form every name must have. -#}
{% macro check_name(indent, p) -%}
{{ indent }}IF p_name IS NULL OR CHAR_LENGTH(TRIM(p_name)) = 0 THEN
{% call refuse_text(indent ~ "    ", p, p.errors.invalid_argument) %}{{ refusals::BLANK_NAME }}{% endcall %}
{{ indent }}END IF;
{% call check_name_form(indent, p) %}{% endcall %}
{%- endmacro %}

{#- Whether p_name may have a problem the name check finds: only a name
    with a character outside printable ASCII, or ending with a space, is
    checked, as no collation ignores a printable ASCII character. Without
    a REGEXP, which cost a tenth of an increment's throughput on MariaDB
    (benchmarks.md): JSON_QUOTE escapes every control character below
    U+0020 (and `"` and `\`, which the check then passes), and keeps the
    others' bytes, so its quoted name is two bytes longer than the name's
    characters only for a name of printable ASCII and DEL; LOCATE finds DEL,
    comparing code points: a collation that ignores DEL (MySQL's
    utf8mb4_unicode_ci) finds it in every name. A name with either runs the
    check, which alone decides. -#}
{% macro unusual_characters(p) -%}
OCTET_LENGTH(JSON_QUOTE(p_name)) <> CHAR_LENGTH(p_name) + 2 OR LOCATE(CHAR(127 USING {{ p.types.charset }}), p_name COLLATE {{ p.types.charset }}_bin) OR p_name LIKE '% '
{%- endmacro %}

{#- Whether a row of counter p_name is left in a table of its features
    beside the slots (a delete interrupted after them): for a package
    with such tables. -#}
{% macro rows_left_beside_slots(indent, p) -%}
EXISTS (
{%- for table in p.names.counter_rows_tables %}
{{ indent }}    SELECT 1 FROM `{{ table }}` WHERE `counter_name` = p_name{% if !loop.last || p.has.periods %} UNION ALL{% endif %}
{%- endfor %}
{%- if p.has.periods %}
{{ indent }}    SELECT 1 FROM `{{ p.names.buckets_table }}` WHERE `counter_name` = p_name
{%- endif %})
{%- endmacro %}

{#- On the hot path of a package whose names compare in a binary
    collation, the name check where a write found no row. -#}
{% macro deferred_name_check(p, indent) -%}
{{ indent }}-- Name checked only now: in a binary collation a bad one matches no row.
{% call check_name_form(indent, p) %}{% endcall %}
{%- endmacro %}

{#- A function's answer for a name no counter may have: NULL. -#}
{% macro null_if_unusable(p) -%}
    IF CHAR_LENGTH(p_name) > {{ p.types.name_length }}
       OR ({% call unusual_characters(p) %}{% endcall %}) AND `{{ p.routine(Routine::NameProblem) }}`(p_name) IS NOT NULL THEN
        RETURN NULL;
    END IF;
{%- endmacro %}

{#- Whether counter `name` tracks no period, as a slot row's `untracked`
    is set from: a share-locked look, evaluated for each row the statement
    has locked. A period track starts (an insert into the periods' table)
    either before the look, which then sees it, or after it, and then sets
    the rows again once the look's statement has ended. -#}
{% macro tracks_none(p, name) -%}
NOT EXISTS (SELECT 1 FROM `{{ p.names.periods_table }}` WHERE `{{ p.names.periods_table }}`.`counter_name` = {{ name }} LOCK IN SHARE MODE)
{%- endmacro %}

{#- Inserts `count` slot rows of counter p_name in one statement, numbered
    `id` (from slot.id = 1), with `values` for the description, start date
    and count, and in a package with periods `untracked` for the column of
    that name (empty: whether the counter tracks none). -#}
{% macro slot_rows(indent, p, id, values, count, untracked) -%}
{{ indent }}INSERT INTO `{{ p.names.table }}` (`counter_name`, `counter_id`, `description`, `start_date`, `counter`{% if p.has.periods %}, `untracked`{% endif %})
{{ indent }}WITH digit (d) AS ({{ p.slots.numbers.digits }})
{{ indent }}SELECT p_name, {{ id }}, {{ values }}{% if p.has.periods %}, {% if untracked.is_empty() %}{% call tracks_none(p, "p_name") %}{% endcall %}{% else %}{{ untracked }}{% endif %}{% endif %}
{{ indent }}FROM (SELECT {{ p.slots.numbers.number }} AS id FROM {{ p.slots.numbers.tables }}) AS slot
{{ indent }}WHERE slot.id <= {{ count }};
{%- endmacro %}

{#- The variables of a Group Replication member's position, beside v_slot. -#}
{% macro declare_position(indent, p) -%}
{%- if p.slots.group_members.is_some() %}
{{ indent }}DECLARE v_position INT;
{{ indent }}DECLARE v_members INT;
{%- endif %}
{%- endmacro %}

{#- For Group Replication, once per call: the member's position among the
    group's members, in the order of their server UUIDs, and their number.
    The group's auto_increment_offset is the server id, and ids such as 1,
    8 and 15 are equal modulo the increment (7): a rank is never shared. A
    server in no group sees itself alone, or nobody: position 1 of 1. -#}
{% macro find_position(indent, p) -%}
{%- if let Some(members) = p.slots.group_members %}
{{ indent }}SELECT COALESCE(SUM(`MEMBER_ID` < @@GLOBAL.server_uuid), 0) + 1, GREATEST(COUNT(*), 1)
{{ indent }}  INTO v_position, v_members
{{ indent }}  FROM {{ members }};
{%- endif %}
{%- endmacro %}

{#- Sets v_slot to the slot an increment adds to, among p.slots.count slots
    (a number, or v_slots). For node slots: first the node's position p in a
    cluster of k, then one of p, p + k, p + 2k, ... at random. Galera keeps
    auto_increment_offset at the position and auto_increment_increment at
    the size (an offset above the increment counts modulo the increment);
    Group Replication's come from find_position. A counter with fewer slots
    than p gets slot (p - 1) % slots + 1, shared with fewer nodes than any
    random pick. With v_slots from read_slot_count, slot 2 is skipped when
    it stays share-locked there. -#}
{% macro pick_slot(indent, p) -%}
{% match p.slots.choice -%}
{% when SlotChoice::Random -%}
{{ indent }}SET v_slot = FLOOR(RAND() * {{ p.slots.count }}) + 1;
{%- when SlotChoice::Connection -%}
{{ indent }}SET v_slot = CONNECTION_ID() % {{ p.slots.count }} + 1;
{%- when SlotChoice::Node -%}
{{ indent }}SET v_slot = {{ p.slots.node_position }};
{{ indent }}SET v_slot = IF(v_slot <= {{ p.slots.count }},
{{ indent }}    v_slot + {{ p.slots.node_count }} * FLOOR(RAND() * (FLOOR(({{ p.slots.count }} - v_slot) / {{ p.slots.node_count }}) + 1)),
{{ indent }}    (v_slot - 1) % {{ p.slots.count }} + 1);
{%- endmatch %}
{%- if p.slots.fixed.is_none() %}
{{ indent }}IF v_second_locked AND v_slot >= 2 THEN
{{ indent }}    SET v_slot = v_slot + 1;
{{ indent }}END IF;
{%- endif %}
{%- endmacro %}

{#- Reads the number a number parameter's text writes into `into`, a
    DECIMAL(65, 30), through the parse routine; on the `hot` path an
    integer written as clients write one ('42') is read inline first, with
    no function call and no REGEXP (a tenth of an increment's throughput).
    In an IF's condition, not in a SET or a function, where the CAST of
    text that is no number (1292) is an error in strict mode. -#}
{% macro read_number(indent, p, param, into, hot = false) -%}
{%- if hot -%}
{{ indent }}IF CONCAT(CAST({{ param }} AS SIGNED)) = {{ param }} THEN
{{ indent }}    SET {{ into }} = {{ param }};
{{ indent }}ELSE
{{ indent }}    SET {{ into }} = `{{ p.routine(Routine::ParseNumber) }}`({{ param }});
{{ indent }}END IF;
{%- else -%}
{{ indent }}SET {{ into }} = `{{ p.routine(Routine::ParseNumber) }}`({{ param }});
{%- endif %}
{%- endmacro %}

{#- Whether a number (a DECIMAL, as `number` gives) is a whole number
    within BIGINT; FALSE for NULL. -#}
{% macro is_bigint(value) -%}
COALESCE({{ value }} = TRUNCATE({{ value }}, 0) AND {{ value }} BETWEEN -9223372036854775808 AND 9223372036854775807, FALSE)
{%- endmacro %}

{#- A number parameter's text as a refusal writes it, cut to 40
    characters: as it came when it is a number (`value`, as `number` read
    it), quoted when it is not. -#}
{% macro number_text(param, value) -%}
IF({{ value }} IS NULL, COALESCE(QUOTE(LEFT({{ param }}, 40)), 'NULL'), LEFT({{ param }}, 40))
{%- endmacro %}

{#- Refuses `value`, a value that goes into slot 1, past the slot bound: in
    a package without the triggers that keep every slot within it. -#}
{% macro check_slot_bound(indent, p, value) -%}
{{ indent }}IF {{ value }} NOT BETWEEN -{{ p.slots.bound }} AND {{ p.slots.bound }} THEN
{% call refuse(indent ~ "    ", p, p.errors.invalid_argument) %}'{{ refusals::past_bound(*p.slots.bound) }}{{ refusals::FOR_COUNTER }}: ', QUOTE(p_name){% endcall %}
{{ indent }}END IF;
{%- endmacro %}

{#- The invalid-argument error of a slot the write would take past the bound. -#}
{% macro slot_bound_error(indent, p) -%}
{% call refuse(indent, p, p.errors.invalid_argument) %}'{{ refusals::past_bound(*p.slots.bound) }}{{ refusals::FOR_COUNTER }}: ', QUOTE(NEW.`counter_name`){% endcall %}
{%- endmacro %}

{#- For packages with a counter limit: refuses a name no counter has yet
    once the table holds that many counters, counted in the primary key's
    index up to the limit. SELECT ... INTO, not a subquery in IF, which
    with binary logging would lock the rows it reads. -#}
{% macro check_counter_limit(indent, p) -%}
{%- if let Some(limit) = p.has.max_counters %}
{{ indent }}BEGIN
{{ indent }}    DECLARE v_known INT;
{{ indent }}    DECLARE v_counters BIGINT;
{{ indent }}    SELECT COUNT(*) INTO v_known FROM (SELECT 1 FROM `{{ p.names.table }}` WHERE `counter_name` = p_name LIMIT 1) AS known;
{{ indent }}    IF v_known = 0 THEN
{{ indent }}        SELECT COUNT(*) INTO v_counters FROM (SELECT DISTINCT `counter_name` FROM `{{ p.names.table }}` LIMIT {{ limit }}) AS counted;
{{ indent }}        IF v_counters >= {{ limit }} THEN
{% call refuse(indent ~ "            ", p, p.errors.invalid_argument) %}'the package holds its most counters ({{ limit }}), so none can be created: ', QUOTE(p_name){% endcall %}
{{ indent }}        END IF;
{{ indent }}    END IF;
{{ indent }}END;
{%- endif %}
{%- endmacro %}

{#- True inside a caller's transaction under MariaDB's snapshot isolation
    (innodb_snapshot_isolation, on by default from 11.6.2), where a plain
    read opens a read view and a write to a row changed since fails with
    1020. The variable reached several maintenance branches (10.6.18,
    10.11.8, ...: MDEV-35124), so no version gate says where it exists: the
    probe refuses a MariaDB without it, and a routine names it in a comment
    only MariaDB runs. MySQL, which has no snapshot isolation, reads FALSE. -#}
{% macro snapshot_transaction() -%}
/*M! @@innodb_snapshot_isolation AND (@@in_transaction OR NOT @@autocommit) OR */ FALSE
{%- endmacro %}

{#- Reads into `into` how many slots of counter p_name an increment picks
    among: its slot count, the last slot's number as slots are numbered
    1..n, one index entry (inside a routine, MAX(`counter_id`) reads every
    slot); NULL when the counter does not exist. Inside a caller's
    transaction under snapshot isolation (snapshot_transaction) the reads
    lock instead
    of opening a read view, and they leave share-locked no slot the
    increment may write: two transactions that raise their share locks on
    one row to write it deadlock. A look at slot 2 comes first: when it is
    missing, it locks only the gap where it would be (so no slot is added
    meanwhile), and slot 1, the only one, is locked for writing at once.
    Otherwise slots 2 and n stay share-locked, v_second_locked is set, and
    pick_slot picks among the n - 2 others (slot 1 when n is 2 or 3). The
    reads stay plain elsewhere: in autocommit mode the view closes with the
    statement, and a locking read would queue behind the slot's writers.
    A trigger's statement is not told from a plain call:
    there a lock wait may still end in 1020, to be retried as a deadlock.
    With `untracked`, the same read also sets v_untracked to whether the
    counter tracks no period, and with `bounded` v_bounded to whether it
    is bounded: no read more on the hot path. -#}
{% macro read_slot_count(indent, p, into, untracked = false, bounded = false, skips_padded = false) -%}
{{ indent }}IF {% call snapshot_transaction() %}{% endcall %} THEN
{{ indent }}    SELECT COUNT(*){% if untracked %}, COALESCE(MAX(`untracked`), FALSE){% endif %}{% if bounded %}, COALESCE(MAX({% call is_bounded_slot() %}{% endcall %}), FALSE){% endif %} INTO v_second_locked{% if untracked %}, v_untracked{% endif %}{% if bounded %}, v_bounded{% endif %} FROM `{{ p.names.table }}` WHERE `counter_name` = p_name AND `counter_id` = 2{% if skips_padded %} AND p_name NOT LIKE '% '{% endif %}
{{ indent }}     LOCK IN SHARE MODE;
{{ indent }}    IF v_second_locked THEN
{{ indent }}        SELECT `counter_id` - 2 INTO {{ into }} FROM `{{ p.names.table }}` WHERE `counter_name` = p_name AND `counter_id` > 2{% if skips_padded %} AND p_name NOT LIKE '% '{% endif %}
{{ indent }}         ORDER BY `counter_id` DESC LIMIT 1 LOCK IN SHARE MODE;
{{ indent }}        SET {{ into }} = COALESCE({{ into }}, 1);
{{ indent }}    ELSE
{{ indent }}        SELECT `counter_id`{% if untracked %}, `untracked`{% endif %}{% if bounded %}, {% call is_bounded_slot() %}{% endcall %}{% endif %} INTO {{ into }}{% if untracked %}, v_untracked{% endif %}{% if bounded %}, v_bounded{% endif %} FROM `{{ p.names.table }}` WHERE `counter_name` = p_name AND `counter_id` = 1{% if skips_padded %} AND p_name NOT LIKE '% '{% endif %}
{{ indent }}         FOR UPDATE;
{{ indent }}    END IF;
{{ indent }}ELSE
{{ indent }}    SELECT `counter_id`{% if untracked %}, `untracked`{% endif %}{% if bounded %}, {% call is_bounded_slot() %}{% endcall %}{% endif %} INTO {{ into }}{% if untracked %}, v_untracked{% endif %}{% if bounded %}, v_bounded{% endif %} FROM `{{ p.names.table }}` WHERE `counter_name` = p_name{% if skips_padded %} AND p_name NOT LIKE '% '{% endif %}
{{ indent }}     ORDER BY `counter_id` DESC LIMIT 1;
{{ indent }}END IF;
{%- endmacro %}

{#- Whether a slot row's counter tracks no period and has no bound (every
    slot of a counter says the same): its write is the classic package's
    one UPDATE of a slot. -#}
{% macro takes_classic_write(p) -%}
{%- if p.has.periods %}`untracked`{% if p.has.bounds %} AND {% endif %}{% endif %}
{%- if p.has.bounds %}`lowest` IS NULL AND `highest` IS NULL{% endif %}
{%- endmacro %}

{#- Whether a slot row's counter is bounded (every slot says the same). -#}
{% macro is_bounded_slot() -%}
(`lowest` IS NOT NULL OR `highest` IS NOT NULL)
{%- endmacro %}

{#- What read_slot_count needs declared beside `into`. -#}
{% macro declare_slot_count(indent) -%}
{{ indent }}-- Whether reading the slot count share-locked slot 2: the pick skips it.
{{ indent }}DECLARE v_second_locked BOOLEAN DEFAULT FALSE;
{%- endmacro %}

{#- Reads counter p_name's last slot into v_slots (0: none). Inside a
    caller's transaction under MariaDB's snapshot isolation
    (snapshot_transaction), share-locked: a plain read there would open a read
    view, which fails the writes after it (1020). Elsewhere plain: on Group
    Replication, the applier rolls back a local statement that holds a lock
    a remote increment needs. No LIMIT: a locking read with one is unsafe
    for statement-based logging (1592). -#}
{% macro read_last_slot(indent, p) -%}
{{ indent }}IF {% call snapshot_transaction() %}{% endcall %} THEN
{{ indent }}    SELECT COALESCE(MAX(`counter_id`), 0) INTO v_slots
{{ indent }}      FROM `{{ p.names.table }}` FORCE INDEX (PRIMARY) WHERE `counter_name` = p_name LOCK IN SHARE MODE;
{{ indent }}ELSE
{{ indent }}    SELECT COALESCE(MAX(`counter_id`), 0) INTO v_slots
{{ indent }}      FROM `{{ p.names.table }}` FORCE INDEX (PRIMARY) WHERE `counter_name` = p_name;
{{ indent }}END IF;
{%- endmacro %}

{#- The refusal of a write id that is not 16 bytes (a VARBINARY wider than
    16, so that a short id is not padded into a valid one). -#}
{% macro check_write_id(indent, p) -%}
{{ indent }}IF p_write_id IS NULL OR LENGTH(p_write_id) <> 16 THEN
{% call refuse_text(indent ~ "    ", p, p.errors.invalid_argument) %}write id must be 16 bytes{% endcall %}
{{ indent }}END IF;
{%- endmacro %}

{#- Records write id p_write_id under `name` and applies `plan` (the
    write's `hex(name):slot:delta;` entries) in one statement: the INSERT of
    the id, whose trigger applies the plan. The id and the deltas commit
    together or not at all, in autocommit mode with no transaction of the
    call's own: a call the server kills, which on MySQL runs no handler,
    leaves nothing open on the connection. In a caller's transaction a
    refused statement undoes only itself. The plan, and the moment whose
    buckets it counts in (`at`: NULL for now), reach the trigger in session
    variables, for this id only. With `resend`, the id is the caller's, who
    may send the write again: an id already recorded (1062, which only the
    INSERT raises) ends the call, its write committed before. A second call
    with an id still being written waits for the first's row lock, then
    finds it recorded or free. -#}
{% macro record_write(indent, p, name, plan, resend, at) -%}
{{ indent }}BEGIN
{%- if resend %}
{{ indent }}    DECLARE EXIT HANDLER FOR 1062 BEGIN END;
{%- endif %}
{{ indent }}    DECLARE EXIT HANDLER FOR SQLEXCEPTION
{{ indent }}    BEGIN
{% call forget_write_plan(indent ~ "        ") %}{% endcall %}
{{ indent }}        RESIGNAL;
{{ indent }}    END;
{{ indent }}    SET @slotted_counters_write_id = p_write_id, @slotted_counters_write_plan = {{ plan }},
{{ indent }}        @slotted_counters_write_at = {{ at }};
{{ indent }}    INSERT INTO `{{ p.names.writes_table }}` (`counter_name`, `write_id`, `written_at`, `{{ p.names.pending_column }}`)
{{ indent }}    VALUES ({{ name }}, p_write_id, UTC_TIMESTAMP(6), TRUE);
{{ indent }}END;
{% call forget_write_plan(indent) %}{% endcall %}
{%- endmacro %}

{#- Clears what record_write hands its trigger. -#}
{% macro forget_write_plan(indent) -%}
{{ indent }}SET @slotted_counters_write_id = NULL, @slotted_counters_write_plan = NULL,
{{ indent }}    @slotted_counters_write_at = NULL;
{%- endmacro %}

{#- After a write with an id in autocommit mode, one call in
    p.write_ids.forget_chance forgets up to p.write_ids.forget_per_write ids older than the
    package's window, the oldest first, in a short statement of its own:
    four per write on average, more than the one each records, so the table
    keeps no more than the window's ids with no job of an operator's. The
    DELETE names the newest time it forgets, read first: a DELETE with a
    LIMIT is unsafe for statement-based logging (1592). Concurrent calls
    that forget meet on the oldest rows and wait for each other, not for
    the writes, which insert at the newest end. Inside a caller's
    transaction none is forgotten: its locks would last as long as that
    transaction, which a savepoint that outlives its statement tells (MySQL
    has no @@in_transaction). The write has committed: an error of the
    forgetting (a lock wait timeout) is left for a later call to meet
    again. -#}
{% macro forget_expired_writes(indent, p) -%}
{{ indent }}IF RAND() * {{ p.write_ids.forget_chance }} < 1 AND @@autocommit THEN
{{ indent }}    BEGIN
{{ indent }}        DECLARE v_in_transaction BOOLEAN DEFAULT TRUE;
{{ indent }}        DECLARE v_until DATETIME(6);
{{ indent }}        DECLARE CONTINUE HANDLER FOR 1305 SET v_in_transaction = FALSE;
{{ indent }}        SAVEPOINT slotted_counters_forget;
{{ indent }}        ROLLBACK TO SAVEPOINT slotted_counters_forget;
{{ indent }}        IF NOT v_in_transaction THEN
{{ indent }}            BEGIN
{{ indent }}                DECLARE CONTINUE HANDLER FOR SQLEXCEPTION BEGIN END;
{% call oldest_expired_writes(indent ~ "                ", p, "UTC_TIMESTAMP(6) - INTERVAL " ~ p.write_ids.window ~ " SECOND", p.write_ids.forget_per_write) %}{% endcall %}
{{ indent }}                DELETE FROM `{{ p.names.writes_table }}` WHERE `written_at` <= v_until;
{{ indent }}            END;
{{ indent }}        END IF;
{{ indent }}    END;
{{ indent }}END IF;
{%- endmacro %}

{#- Reads into v_until when the newest of the `most` oldest ids recorded
    before `before` was written (NULL: none was), and into v_count, when
    declared (`counted`), how many of them there are. -#}
{% macro oldest_expired_writes(indent, p, before, most, counted = false) -%}
{{ indent }}SELECT {% if counted %}COUNT(*), {% endif %}MAX(`written_at`) INTO {% if counted %}v_count, {% endif %}v_until
{{ indent }}  FROM (SELECT `written_at` FROM `{{ p.names.writes_table }}` WHERE `written_at` < {{ before }}
{{ indent }}         ORDER BY `written_at` LIMIT {{ most }}) AS oldest;
{%- endmacro %}

{#- Takes the next entry off v_plan (`hex(name):slot:delta;` each) into
    p_name, v_slot and v_delta. -#}
{% macro next_plan_entry(indent, p) -%}
{{ indent }}SET v_entry = SUBSTRING_INDEX(v_plan, ';', 1);
{{ indent }}SET v_plan = SUBSTRING(v_plan, LENGTH(v_entry) + 2);
{{ indent }}SET p_name = CONVERT(UNHEX(SUBSTRING_INDEX(v_entry, ':', 1)) USING {{ p.types.charset }});
{{ indent }}SET v_slot = SUBSTRING_INDEX(SUBSTRING_INDEX(v_entry, ':', 2), ':', -1);
{{ indent }}SET v_delta = SUBSTRING_INDEX(v_entry, ':', -1);
{%- endmacro %}

{#- The invalid-argument errors of a delta: NULL, or not a whole number
    within BIGINT. Sets v_delta, through v_number. -#}
{% macro check_delta(indent, p, hot = false) -%}
{{ indent }}IF p_delta IS NULL THEN
{% call refuse(indent ~ "    ", p, p.errors.invalid_argument) %}'delta must not be NULL, for counter: ', QUOTE(p_name){% endcall %}
{{ indent }}END IF;
{% call read_number(indent, p, "p_delta", "v_number", hot) %}{% endcall %}
{{ indent }}IF NOT {% call is_bigint("v_number") %}{% endcall %} THEN
{% call refuse(indent ~ "    ", p, p.errors.invalid_argument) %}'delta must be an integer, for counter: ', QUOTE(p_name){% endcall %}
{{ indent }}END IF;
{{ indent }}SET v_delta = v_number;
{%- endmacro %}

{#- Group Replication: waits, holding no lock, until the member has
    applied every transaction the group certified before now (the set its
    applier channel has received), at most 10 s. A step that starts on a
    member still applying a backlog reads rows other members have changed
    since, and loses certification to them: under load, always. A wait of
    its own statement, not the session's group_replication_consistency
    BEFORE: that one waits inside the statement that records the change,
    once its trigger holds the slots' locks, where the applier waiting for
    those locks never ends it; and a killed call, whose handler MySQL does
    not run, would leave the session at BEFORE. Where the plugin is missing
    (MariaDB included) there is no such channel, or no such table, and
    nothing to wait for. -#}
{% macro wait_for_the_group(indent) -%}
{{ indent }}BEGIN
{{ indent }}    DECLARE v_certified LONGTEXT CHARACTER SET ascii;
{{ indent }}    DECLARE CONTINUE HANDLER FOR SQLEXCEPTION SET v_certified = NULL;
{{ indent }}    SELECT MAX(`RECEIVED_TRANSACTION_SET`) INTO v_certified
{{ indent }}      FROM performance_schema.replication_connection_status
{{ indent }}     WHERE `CHANNEL_NAME` = 'group_replication_applier';
{{ indent }}    IF v_certified <> '' THEN
{{ indent }}        DO WAIT_FOR_EXECUTED_GTID_SET(v_certified, 10);
{{ indent }}    END IF;
{{ indent }}END;
{%- endmacro %}
