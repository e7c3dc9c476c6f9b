{#- The changes that rewrite more than one slot, as the trigger on the
    table of changes makes them (see _changes_table.sql): each locks what it
    reads (FOR UPDATE), and reads no more than it locks. Inside a trigger no
    statement may hold a LIMIT or call ROW_COUNT(): either makes the
    statement that fires it unsafe for statement-based logging (1592). The
    change's arguments are the columns of NEW; p_name is its counter. -#}
{%- import "_macros.sql" as m -%}

{#- Every slot locked, then the slots up to NEW.slots added after them. -#}
{% macro grow(p) %}
        SELECT COUNT(*), MAX(`description`), MIN(`start_date`) INTO v_slots, v_description, v_start_date
          FROM `{{ p.table }}` FORCE INDEX (PRIMARY) WHERE `counter_name` = p_name FOR UPDATE;
        IF v_slots = 0 THEN
{% call m::unknown_counter("            ", p) %}{% endcall %}
        END IF;
{% call m::slot_rows("        ", p, "v_slots + slot.id", "v_description, v_start_date, 0", "NEW.`slots` - v_slots") %}{% endcall %}
{%- endmacro %}

{#- Slot NEW.slots moved into slot NEW.into_slot, as the comment says. -#}
{% macro shrink(p) %}
        -- The slot it removes must still be the counter's last (else another
        -- resize got there first, and nothing changes): it is locked, with
        -- the gap above it, and then the slot that takes its value. Three
        -- keys, where locking every slot made Group Replication's applier
        -- roll the step back for each remote increment.
        SELECT COUNT(*), CAST(COALESCE(SUM(`counter`), 0) AS SIGNED) INTO v_found, v_moved
          FROM `{{ p.table }}` WHERE `counter_name` = p_name AND `counter_id` = NEW.`slots` FOR UPDATE;
        SELECT COUNT(*) INTO v_above
          FROM `{{ p.table }}` WHERE `counter_name` = p_name AND `counter_id` = NEW.`slots` + 1 FOR UPDATE;
        IF v_found = 1 AND v_above = 0 THEN
            DELETE FROM `{{ p.table }}` WHERE `counter_name` = p_name AND `counter_id` = NEW.`slots`;
            UPDATE `{{ p.table }}` SET `counter` = `counter` + v_moved
             WHERE `counter_name` = p_name AND `counter_id` = NEW.`into_slot`;
        END IF;
{%- endmacro %}

{#- Every slot locked and summed, and the sum put into slot 1: lazy
    counters keep only the rows that were hit, so slot 1 may be missing,
    and the counter is written again as that one row; else the other slots
    become 0. -#}
{% macro compact(p) %}
{%- if p.auto_create %}
        SELECT COUNT(*), CAST(SUM(`counter`) AS SIGNED), MAX(`description`), MIN(`start_date`)
          INTO v_slots, v_total, v_description, v_start_date
          FROM `{{ p.table }}` FORCE INDEX (PRIMARY) WHERE `counter_name` = p_name FOR UPDATE;
{%- else %}
        SELECT COUNT(*), CAST(SUM(`counter`) AS SIGNED) INTO v_slots, v_total
          FROM `{{ p.table }}` FORCE INDEX (PRIMARY) WHERE `counter_name` = p_name FOR UPDATE;
{%- endif %}
        IF v_slots = 0 THEN
{% call m::unknown_counter("            ", p) %}{% endcall %}
        END IF;
{%- if p.auto_create %}
        DELETE `{{ p.table }}` FROM `{{ p.table }}` FORCE INDEX (PRIMARY) WHERE `counter_name` = p_name;
        INSERT INTO `{{ p.table }}` (`counter_name`, `counter_id`, `description`, `start_date`, `counter`)
        VALUES (p_name, 1, v_description, v_start_date, v_total);
{%- else %}
        UPDATE `{{ p.table }}` FORCE INDEX (PRIMARY) SET `counter` = IF(`counter_id` = 1, v_total, 0)
         WHERE `counter_name` = p_name;
{%- endif %}
{%- endmacro %}

{#- A lazy counter, which may lack slot 1, written again as one row of
    value NEW.value. -#}
{% macro reset_lazy(p) %}
        SELECT COUNT(*), MAX(`description`), MIN(`start_date`) INTO v_slots, v_description, v_start_date
          FROM `{{ p.table }}` FORCE INDEX (PRIMARY) WHERE `counter_name` = p_name FOR UPDATE;
        IF v_slots = 0 THEN
{% call m::unknown_counter("            ", p) %}{% endcall %}
        END IF;
        DELETE `{{ p.table }}` FROM `{{ p.table }}` FORCE INDEX (PRIMARY) WHERE `counter_name` = p_name;
        INSERT INTO `{{ p.table }}` (`counter_name`, `counter_id`, `description`, `start_date`, `counter`)
        VALUES (p_name, 1, v_description, IF(NEW.`reset_start_date`, NOW(), v_start_date), NEW.`value`);
{%- endmacro %}

{#- A cluster's reset: every slot changed twice, as the comment says. -#}
{% macro reset_certified(p) %}
        SELECT COUNT(*) INTO v_slots
          FROM `{{ p.table }}` FORCE INDEX (PRIMARY) WHERE `counter_name` = p_name FOR UPDATE;
        IF v_slots = 0 THEN
{% call m::unknown_counter("            ", p) %}{% endcall %}
        END IF;
        -- A multi-primary cluster ({{ p.cluster_name }}) certifies a
        -- transaction by the rows it changes, and this node may not yet have
        -- applied an increment another node has acknowledged: a slot still 0
        -- here would not change, and that increment would outlive the reset.
        -- Changing every slot first puts each in the write set, so the reset
        -- fails certification (error {{ p.certification_error }}) instead, and run again it
        -- sees the increment.
        UPDATE `{{ p.table }}` FORCE INDEX (PRIMARY) SET `counter` = IF(`counter` = 0, 1, 0) WHERE `counter_name` = p_name;
        UPDATE `{{ p.table }}` FORCE INDEX (PRIMARY)
           SET `counter` = IF(`counter_id` = 1, NEW.`value`, 0),
               `start_date` = IF(NEW.`reset_start_date`, NOW(), `start_date`)
         WHERE `counter_name` = p_name;
{%- endmacro %}
