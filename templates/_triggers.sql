{%- import "_macros.sql" as m -%}
-- A slot holds at most {{ p.slot_bound }} either way: the largest BIGINT over the
-- most slots a counter may have ({{ p.bound_slots }}), so that a counter's total always
-- fits the BIGINT that counter_get returns. Triggers keep every write to the
-- table to it, whichever routine or statement makes it. An update may still
-- bring a slot beyond the bound back toward 0.
/*!80000 DROP TRIGGER IF EXISTS `{{ p.insert_trigger }}` */$$
CREATE /*M! OR REPLACE */ TRIGGER `{{ p.insert_trigger }}` BEFORE INSERT ON `{{ p.table }}`
FOR EACH ROW
BEGIN
    DECLARE v_message {{ p.message_type }};
    IF NEW.`counter` NOT BETWEEN -{{ p.slot_bound }} AND {{ p.slot_bound }} THEN
{% call m::slot_bound_error("        ", p) %}{% endcall %}
    END IF;
END$$

/*!80000 DROP TRIGGER IF EXISTS `{{ p.update_trigger }}` */$$
CREATE /*M! OR REPLACE */ TRIGGER `{{ p.update_trigger }}` BEFORE UPDATE ON `{{ p.table }}`
FOR EACH ROW
BEGIN
    DECLARE v_message {{ p.message_type }};
    IF (NEW.`counter` > {{ p.slot_bound }} AND NEW.`counter` > OLD.`counter`)
       OR (NEW.`counter` < -{{ p.slot_bound }} AND NEW.`counter` < OLD.`counter`) THEN
{% call m::slot_bound_error("        ", p) %}{% endcall %}
    END IF;
END$$
