//! Renders the package's SQL files from the askama templates in `templates/`.
//!
//! Everything a template places is computed here from validated
//! [`PackageOptions`]; the templates themselves stay SQL-shaped.

use askama::Template;

use crate::error::Error;
use slotted_counters_core::names;
use slotted_counters_core::options::flags;
use slotted_counters_core::package::{self, Routine, errno, server_errno};
use slotted_counters_core::plain::{self, PlainSql};
use slotted_counters_core::{Cluster, PackageOptions, SlotChoice, SlotPolicy};

/// Width of every text parameter, in characters, whatever its column's.
/// A session with a non-strict `sql_mode` cuts a longer argument to this
/// width with only a warning: kept wider than any name or description may
/// be, a cut argument is still too long and meets the routine's own check,
/// instead of being cut to another counter's name. (A strict session rejects
/// an argument wider than this with error 1406.)
const TEXT_PARAMETER_LENGTH: u32 = 1024;

/// Character set of the table, of every text parameter and of every text
/// variable: a variable without one takes the database's, and a latin1
/// database cannot hold a non-latin1 name in it (error 1366).
const CHARSET: &str = "utf8mb4";

/// One file of the rendered package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratedFile {
    /// File name inside the output folder, such as `setup.sql`.
    pub name: &'static str,
    /// The file's full text.
    pub contents: String,
}

/// The self-contained install script.
pub const SETUP_SQL: &str = "setup.sql";
/// The script that drops the routines.
pub const UNINSTALL_SQL: &str = "uninstall.sql";

/// The table alone, for the client's plain mode.
pub const PLAIN_TABLES_SQL: &str = "plain_tables.sql";

/// Renders every file of the package, in a fixed order: the routines'
/// files, then, for a package the plain mode can serve, its table, its
/// statements and a Vitess VSchema.
pub fn render(options: &PackageOptions) -> Result<Vec<GeneratedFile>, Error> {
    let p = Context::new(options);
    let mut files = vec![
        file("create_tables.sql", CreateTables { p: &p }.render())?,
        file("create_procedures.sql", CreateProcedures { p: &p }.render())?,
        file(SETUP_SQL, Setup { p: &p }.render())?,
        file(UNINSTALL_SQL, Uninstall { p: &p }.render())?,
    ];
    if let Ok(plain) = PlainSql::new(options) {
        let statements = plain
            .reference()
            .into_iter()
            .map(|(name, statement)| ReferenceEntry {
                name,
                purpose: statement.purpose,
                params: statement.params.join(", "),
                sql: statement.sql,
            })
            .collect();
        files.extend([
            file(PLAIN_TABLES_SQL, PlainTables { p: &p }.render())?,
            file(
                "plain_statements.sql",
                PlainStatements {
                    p: &p,
                    statements,
                    slot_count_lifetime: plain::SLOT_COUNT_LIFETIME.as_secs(),
                    ignored: code_points(names::ignored_by(options.collation())),
                    folded: names::folded_by(options.collation()),
                    spaces: code_points(names::spaces_in(options.collation())),
                }
                .render(),
            )?,
            GeneratedFile { name: "vschema.json", contents: vschema(options) },
        ]);
    }
    Ok(files)
}

/// Renders `plain_tables.sql` alone; `None` for a package the plain mode
/// cannot serve.
pub fn plain_tables_sql(options: &PackageOptions) -> Result<Option<String>, Error> {
    if PlainSql::new(options).is_err() {
        return Ok(None);
    }
    Ok(Some(file(PLAIN_TABLES_SQL, PlainTables { p: &Context::new(options) }.render())?.contents))
}

/// A Vitess VSchema for a sharded keyspace that holds the table and its
/// write ids: both with their primary vindex on the name, so that every
/// slot of a counter, and the id of every write to it, is on the shard of
/// its name.
fn vschema(options: &PackageOptions) -> String {
    let vschema = serde_json::json!({
        "sharded": true,
        "vindexes": { "counter_name": { "type": plain::name_vindex(options) } },
        "tables": {
            options.table(): {
                "column_vindexes": [{ "column": "counter_name", "name": "counter_name" }]
            },
            package::writes_table(options): {
                "column_vindexes": [{ "column": "counter_name", "name": "counter_name" }]
            }
        }
    });
    format!("{}\n", serde_json::to_string_pretty(&vschema).expect("a JSON value writes"))
}

/// Renders `setup.sql` alone.
pub fn setup_sql(options: &PackageOptions) -> Result<String, Error> {
    Ok(file(SETUP_SQL, Setup { p: &Context::new(options) }.render())?.contents)
}

/// Renders `uninstall.sql` alone.
pub fn uninstall_sql(options: &PackageOptions) -> Result<String, Error> {
    Ok(file(UNINSTALL_SQL, Uninstall { p: &Context::new(options) }.render())?.contents)
}

/// Names a rendered file; askama drops a template's trailing newlines, so
/// every file gets exactly one back here.
fn file(name: &'static str, rendered: askama::Result<String>) -> Result<GeneratedFile, Error> {
    let rendered = rendered.map_err(|source| Error::Render { file: name, source })?;
    Ok(GeneratedFile { name, contents: format!("{}\n", rendered.trim_end()) })
}

/// How `counter_reset` resets a counter.
enum ResetBody {
    /// One UPDATE of every slot.
    Classic,
    /// Lazy counters may lack slot 1: the counter is rewritten as one row.
    Lazy,
    /// Every slot changed before it is set, so that a multi-primary cluster
    /// certifies the reset against increments this node has not applied yet.
    Certified,
}

/// A routine of the package: `_routines.sql` creates it, `uninstall.sql`
/// drops it.
struct RoutineRef {
    routine: Routine,
    kind: &'static str,
    name: String,
}

/// The values the templates place.
struct Context {
    version: &'static str,
    args: String,
    /// Every routine's COMMENT: `status` compares it with what it expects.
    comment: String,
    table: String,
    charset: &'static str,
    collation: String,
    name_length: u32,
    /// Every text parameter is [`TEXT_PARAMETER_LENGTH`] wide, so a
    /// name that is too long reaches the routine's own check instead of
    /// being cut to a valid name by a non-strict session.
    name_type: String,
    description_length: u32,
    description_type: String,
    /// Text variables declare their character set (the database's may be
    /// latin1) and their collation (the server's default for the character
    /// set differs: `utf8mb4_0900_ai_ci` on MySQL 8+, `utf8mb4_general_ci` on
    /// MariaDB, and two of them in one comparison fail with 1267).
    message_type: String,
    description_variable_type: String,
    /// Every numeric parameter: a BIGINT and 30 digits of fraction, so that
    /// a fractional argument reaches the routine's own check instead of
    /// being rounded by the server on the way in.
    number_type: &'static str,
    fixed_slots: Option<u32>,
    /// Which of the three `counter_reset` bodies the package has.
    reset_body: ResetBody,
    /// The cluster a certified reset is made for, as its comments name it.
    cluster_name: &'static str,
    /// The error a transaction that lost certification fails with there.
    certification_error: u16,
    /// Galera's multi-row changes are made by the routines themselves on
    /// MariaDB in autocommit mode, in a transaction of their own: a CALL
    /// whose change, made by the trigger, lost certification (1213) left the
    /// session failing every later CALL with 1213 at once, until it sent a
    /// statement of another kind (MariaDB 10.11.19, galera-4 26.4.23).
    /// MariaDB runs the routine's handler when a call is killed, so the
    /// transaction is not left open; on MySQL and in a caller's transaction
    /// the routines record the change for the trigger, as elsewhere.
    changes_in_own_transaction: bool,
    default_slots: u32,
    max_slots: u32,
    /// How an increment picks its slot.
    slot_choice: SlotChoice,
    /// How many slots it picks among: the fixed count, or `v_slots`.
    slot_count: String,
    /// Node slots: the node's position among the nodes, from 1, and their
    /// number, as SQL expressions.
    node_position: &'static str,
    node_count: &'static str,
    /// Group Replication's table of members, where the routines find their
    /// member's position.
    group_members: Option<&'static str>,
    slot_numbers: SlotNumbers,
    batch_limit: u32,
    /// The most bytes a batch's text may have.
    batch_bytes: u64,
    /// How many entries a batch's statement gathers before it appends them
    /// to its text.
    batch_part: u32,
    /// The most a slot may hold either way, and the slot count it is for.
    slot_bound: i64,
    bound_slots: u32,
    /// The triggers that keep slots within the bound: on insert, on update.
    insert_trigger: String,
    update_trigger: String,
    /// The trigger that applies a write with an id as its id is recorded.
    apply_trigger: String,
    /// The trigger that makes a change as it is recorded, and their table.
    change_trigger: String,
    changes_table: String,
    /// The most counters lazy increments may create.
    max_counters: Option<u64>,
    /// A batch of deltas: JSON text, in the package's character set.
    deltas_type: String,
    /// The parts of the statement a batch builds: hex literals, numbers
    /// and keywords.
    statement_type: &'static str,
    auto_create: bool,
    /// The view's slot count: the rows of a counter, or the fixed count when
    /// lazily created counters have only the rows that were hit.
    view_slots: String,
    totals_view: String,
    probe: String,
    setup: String,
    add: String,
    increment: String,
    add_many: String,
    reset: String,
    delete: String,
    get: String,
    resize: String,
    compact: String,
    estimate: String,
    add_once: String,
    add_many_once: String,
    forget_writes: String,
    /// The table of write ids, and how many `forget_writes` deletes at a time.
    writes_table: String,
    forget_batch: u32,
    /// Seconds a write id is kept, and how writes with ids forget older
    /// ones as they go: one call in `forget_chance`, up to
    /// `forget_per_write` ids each.
    write_id_window: u32,
    forget_chance: u32,
    forget_per_write: u32,
    routines: Vec<RoutineRef>,
    unknown_counter: u16,
    already_exists: u16,
    invalid_argument: u16,
    /// The SQLSTATE every refusal is signalled with.
    refusal_state: &'static str,
}

/// One write with an id in this many forgets expired ids, up to
/// [`FORGET_PER_WRITE`] of them: four per write on average, more than the
/// one each records, so the expired fall behind no faster than they come.
const FORGET_CHANCE: u32 = 16;
const FORGET_PER_WRITE: u32 = 64;

/// Entries a batch's statement gathers before it appends them to its text.
const BATCH_PART: u32 = 64;

impl ResetBody {
    fn of(options: &PackageOptions) -> Self {
        match options.cluster() {
            _ if options.auto_create() => ResetBody::Lazy,
            Some(_) => ResetBody::Certified,
            None => ResetBody::Classic,
        }
    }
}

/// The cluster a certified reset is made for, as its comments name it, and
/// the error a transaction that lost certification fails with there.
fn certification(options: &PackageOptions) -> (&'static str, u16) {
    match options.cluster() {
        Some(Cluster::GroupReplication) => ("Group Replication", server_errno::CERTIFICATION_FAILED),
        _ => ("Galera", server_errno::DEADLOCK),
    }
}

/// The node's position among the nodes, from 1, and their number, as the
/// SQL expressions node slots use: Group Replication's routines compute
/// them from the group's members; elsewhere, Galera's auto-increment
/// settings give them.
fn node_expressions(options: &PackageOptions) -> (&'static str, &'static str) {
    match options.cluster() {
        Some(Cluster::GroupReplication) => ("v_position", "v_members"),
        _ => (
            "(@@GLOBAL.auto_increment_offset - 1) % @@GLOBAL.auto_increment_increment + 1",
            "@@GLOBAL.auto_increment_increment",
        ),
    }
}

impl Context {
    fn new(options: &PackageOptions) -> Self {
        let text_type = |length: u32| {
            format!("VARCHAR({length}) CHARACTER SET {CHARSET} COLLATE {}", options.collation())
        };
        let (fixed_slots, default_slots) = match options.slots() {
            SlotPolicy::Fixed(slots) => (Some(slots), slots),
            SlotPolicy::Dynamic { default } => (None, default),
        };
        let (cluster_name, certification_error) = certification(options);
        let (node_position, node_count) = node_expressions(options);
        let [insert_trigger, update_trigger, apply_trigger, change_trigger] = package::trigger_names(options);
        // Lazily created counters have only the rows that were hit.
        let view_slots = match fixed_slots {
            Some(slots) if options.auto_create() => slots.to_string(),
            _ => "COUNT(*)".to_owned(),
        };
        Self {
            version: env!("CARGO_PKG_VERSION"),
            args: flags(options).join(" "),
            comment: package::routine_comment(options),
            table: options.table().to_owned(),
            charset: CHARSET,
            collation: options.collation().to_owned(),
            name_length: options.name_length(),
            name_type: text_type(TEXT_PARAMETER_LENGTH),
            description_length: package::DESCRIPTION_LENGTH,
            description_type: text_type(TEXT_PARAMETER_LENGTH),
            message_type: text_type(package::MESSAGE_LENGTH),
            description_variable_type: text_type(package::DESCRIPTION_LENGTH),
            number_type: "DECIMAL(65, 30)",
            fixed_slots,
            reset_body: ResetBody::of(options),
            cluster_name,
            certification_error,
            changes_in_own_transaction: options.cluster() == Some(Cluster::Galera),
            default_slots,
            max_slots: options.max_slots(),
            slot_choice: options.slot_choice(),
            slot_count: fixed_slots.map_or_else(|| "v_slots".to_owned(), |slots| slots.to_string()),
            node_position,
            node_count,
            group_members: (options.cluster() == Some(Cluster::GroupReplication))
                .then_some(package::GROUP_MEMBERS_TABLE),
            slot_numbers: SlotNumbers::up_to(fixed_slots.unwrap_or(options.max_slots())),
            batch_limit: package::BATCH_LIMIT,
            batch_bytes: package::batch_bytes(options.name_length()),
            batch_part: BATCH_PART,
            slot_bound: options.slot_bound(),
            bound_slots: fixed_slots.unwrap_or(options.max_slots()),
            insert_trigger,
            update_trigger,
            apply_trigger,
            change_trigger,
            changes_table: package::changes_table(options),
            max_counters: options.max_counters(),
            deltas_type: format!("LONGTEXT CHARACTER SET {CHARSET} COLLATE {}", options.collation()),
            statement_type: "LONGTEXT CHARACTER SET ascii COLLATE ascii_bin",
            auto_create: options.auto_create(),
            view_slots,
            totals_view: package::totals_view(options),
            probe: package::probe_name(options),
            setup: Routine::Setup.name(options),
            add: Routine::Add.name(options),
            increment: Routine::Increment.name(options),
            add_many: Routine::AddMany.name(options),
            reset: Routine::Reset.name(options),
            delete: Routine::Delete.name(options),
            get: Routine::Get.name(options),
            resize: Routine::Resize.name(options),
            compact: Routine::Compact.name(options),
            estimate: Routine::Estimate.name(options),
            add_once: Routine::AddOnce.name(options),
            add_many_once: Routine::AddManyOnce.name(options),
            forget_writes: Routine::ForgetWrites.name(options),
            writes_table: package::writes_table(options),
            forget_batch: package::FORGET_BATCH,
            write_id_window: options.write_id_window(),
            forget_chance: FORGET_CHANCE,
            forget_per_write: FORGET_PER_WRITE,
            routines: Routine::in_package(options)
                .into_iter()
                .map(|routine| RoutineRef { routine, kind: routine.kind(), name: routine.name(options) })
                .collect(),
            unknown_counter: errno::UNKNOWN_COUNTER,
            already_exists: errno::ALREADY_EXISTS,
            invalid_argument: errno::INVALID_ARGUMENT,
            refusal_state: package::REFUSAL_SQLSTATE,
        }
    }
}

/// Base of the digits that number slot rows.
const DIGIT_BASE: u32 = 16;

/// The numbers 1 to the largest slot count, for the one `INSERT ... SELECT`
/// that creates a counter's slots: a cross join of a constant table of
/// digits, one copy per digit. Neither `JSON_TABLE` (unsafe for
/// statement-based logging: warning 1592) nor a recursive CTE (stopped at
/// 1000 rows by `max_recursive_iterations` and `cte_max_recursion_depth`)
/// does this on both servers.
struct SlotNumbers {
    /// The digit table's rows: `SELECT 0 UNION ALL SELECT 1 ...`.
    digits: String,
    /// The copies of the digit table: `digit AS d0, digit AS d1`.
    tables: String,
    /// The number the digits make, from 1: `d0.d + 16 * d1.d + 1`.
    number: String,
}

impl SlotNumbers {
    fn up_to(largest: u32) -> Self {
        // One digit per power of the base below the largest count.
        let mut weights = vec![1u32];
        while u64::from(DIGIT_BASE).pow(weights.len() as u32) < u64::from(largest) {
            weights.push(DIGIT_BASE.pow(weights.len() as u32));
        }
        let digits =
            (0..DIGIT_BASE).map(|digit| format!("SELECT {digit}")).collect::<Vec<_>>().join(" UNION ALL ");
        let tables = (0..weights.len()).map(|i| format!("digit AS d{i}")).collect::<Vec<_>>().join(", ");
        let terms: Vec<String> = weights
            .iter()
            .enumerate()
            .map(|(i, weight)| if *weight == 1 { format!("d{i}.d") } else { format!("{weight} * d{i}.d") })
            .collect();
        SlotNumbers { digits, tables, number: format!("{} + 1", terms.join(" + ")) }
    }
}

#[derive(Template)]
#[template(path = "create_tables.sql", escape = "none")]
struct CreateTables<'a> {
    p: &'a Context,
}

#[derive(Template)]
#[template(path = "create_procedures.sql", escape = "none")]
struct CreateProcedures<'a> {
    p: &'a Context,
}

#[derive(Template)]
#[template(path = "setup.sql", escape = "none")]
struct Setup<'a> {
    p: &'a Context,
}

#[derive(Template)]
#[template(path = "uninstall.sql", escape = "none")]
struct Uninstall<'a> {
    p: &'a Context,
}

/// One statement of `plain_statements.sql`.
struct ReferenceEntry {
    name: &'static str,
    purpose: &'static str,
    params: String,
    sql: String,
}

#[derive(Template)]
#[template(path = "plain_tables.sql", escape = "none")]
struct PlainTables<'a> {
    p: &'a Context,
}

#[derive(Template)]
#[template(path = "plain_statements.sql", escape = "none")]
struct PlainStatements<'a> {
    p: &'a Context,
    statements: Vec<ReferenceEntry>,
    /// How long the Rust client keeps a slot count, in seconds.
    slot_count_lifetime: u64,
    /// The code points the collation ignores, as the header lists them;
    /// `None` where the client does not know them.
    ignored: Option<String>,
    /// The code points other than U+0020 the collation takes for a space.
    spaces: Option<String>,
    /// What the collation folds together; `None` for a binary one.
    folded: Option<&'static str>,
}

/// `ranges` as a reader writes code points (`U+0300-U+0357, U+200B`),
/// `none` for no range, in lines that fit the header's comments.
fn code_points(ranges: Option<&[(u32, u32)]>) -> Option<String> {
    let ranges = ranges?;
    if ranges.is_empty() {
        return Some("none".to_owned());
    }
    let mut lines = vec![String::new()];
    for &(first, last) in ranges {
        let range =
            if first == last { format!("U+{first:04X}") } else { format!("U+{first:04X}-U+{last:04X}") };
        let line = lines.last_mut().expect("one line at least");
        if line.len() + range.len() > 72 {
            lines.push(range);
        } else {
            if !line.is_empty() {
                line.push_str(", ");
            }
            line.push_str(&range);
        }
    }
    Some(lines.join(",\n-- "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use slotted_counters_core::PackageOptionsBuilder;

    #[test]
    fn code_points_are_written_as_ranges_in_lines_that_fit() {
        assert_eq!(code_points(Some(&[(0x300, 0x357), (0x200B, 0x200B)])).unwrap(), "U+0300-U+0357, U+200B");
        assert_eq!(code_points(Some(&[])).unwrap(), "none");
        assert_eq!(code_points(None), None);
        let many = code_points(names::ignored_by("utf8mb4_unicode_ci")).unwrap();
        assert!(many.lines().count() > 1 && many.lines().all(|line| line.len() <= 80), "{many}");
    }

    /// The routines are created in the order of `Routine::ALL`, the order
    /// `uninstall.sql` and `status` use, and each once.
    #[test]
    fn routines_are_created_in_their_canonical_order() {
        let variants: [PackageOptionsBuilder; 3] = [
            PackageOptions::builder(),
            PackageOptions::builder().fixed_slots(8),
            PackageOptions::builder().fixed_slots(8).auto_create(true),
        ];
        for builder in variants {
            let options = builder.build().unwrap();
            let sql = setup_sql(&options).unwrap();
            let positions: Vec<usize> = Routine::in_package(&options)
                .into_iter()
                .map(|routine| {
                    let create =
                        format!("CREATE /*M! OR REPLACE */ {} `{}`(", routine.kind(), routine.name(&options));
                    assert_eq!(sql.matches(&create).count(), 1, "{create} once in {:?}", flags(&options));
                    sql.find(&create).unwrap_or_default()
                })
                .collect();
            assert!(positions.is_sorted(), "{:?}: {positions:?}", flags(&options));
            let probe = format!("CREATE FUNCTION `{}`()", package::probe_name(&options));
            assert!(sql.find(&probe) < positions.first().copied(), "the probe comes before any routine");
            let creates = sql
                .lines()
                .filter(|line| {
                    line.starts_with("CREATE ")
                        && (line.contains(" PROCEDURE ") || line.contains(" FUNCTION "))
                })
                .count();
            assert_eq!(
                creates,
                Routine::in_package(&options).len() + 1,
                "no routine beyond the package's and the probe"
            );
        }
    }

    #[test]
    fn slot_numbers_have_one_digit_per_power_of_sixteen() {
        let tables = |largest: u32| SlotNumbers::up_to(largest).tables.matches("digit AS").count();
        assert_eq!([1, 16, 17, 256, 1024, 4096, 4097, 65535].map(tables), [1, 1, 2, 2, 3, 3, 4, 4]);
        assert_eq!(SlotNumbers::up_to(1024).number, "d0.d + 16 * d1.d + 256 * d2.d + 1");
        assert!(SlotNumbers::up_to(5).digits.ends_with("UNION ALL SELECT 15"));
    }
}
