//! What the stored-procedure package defines: its routines, the names of
//! its objects and the error numbers they raise. Templates, the installer
//! and the client all take these from here, so the SQL and the Rust side
//! cannot drift apart.

use crate::features::{Feature, Features};
pub use crate::objects::{
    APPLIED_CHECK_SUFFIX, BUCKETS_TABLE_SUFFIX, CHANGES_TABLE_SUFFIX, GRANTS_KEEPER_SUFFIX,
    PERIODS_TABLE_SUFFIX, PROBE_SUFFIX, ROOMS_VIEW_SUFFIX, Routine, SPREADS_TABLE_SUFFIX, TOTALS_VIEW_SUFFIX,
    TRACKED_WRITES_TABLE_SUFFIX, TRIGGER_SUFFIXES, WRITES_TABLE_SUFFIX,
};
use crate::options::{PackageOptions, SlotPolicy, flags};

impl Routine {
    /// The routines the package made with `options` has: those of its
    /// features, no resize of a fixed slot count, and no `add_featured` in
    /// a package of lazy counters, whose routines make that write inline.
    pub fn in_package(options: &PackageOptions) -> Vec<Routine> {
        Routine::ALL
            .into_iter()
            .filter(|routine| options.features().covers(routine.needs()))
            .filter(|&routine| match routine {
                Routine::Resize => matches!(options.slots(), SlotPolicy::Dynamic { .. }),
                // Lazy counters have no classic write to try first: theirs
                // is the featured one, inline.
                Routine::AddFeatured => !options.auto_create(),
                _ => true,
            })
            .collect()
    }

    /// The routine's full name in the package made with `options`, prefix included.
    pub fn name(self, options: &PackageOptions) -> String {
        format!("{}{}", options.prefix(), self.suffix())
    }
}

/// The name of the view of totals, prefix included.
pub fn totals_view(options: &PackageOptions) -> String {
    format!("{}{TOTALS_VIEW_SUFFIX}", options.prefix())
}

/// The name of the view of every counter's room, prefix included.
pub fn rooms_view(options: &PackageOptions) -> String {
    format!("{}{ROOMS_VIEW_SUFFIX}", options.prefix())
}

/// The views of the package made with `options`: the totals, and the
/// rooms where it has periods.
pub fn views_in_package(options: &PackageOptions) -> Vec<String> {
    let rooms = options.features().has(Feature::Periods).then(|| rooms_view(options));
    std::iter::once(totals_view(options)).chain(rooms).collect()
}

/// The name of the table of write ids, prefix included.
pub fn writes_table(options: &PackageOptions) -> String {
    format!("{}{WRITES_TABLE_SUFFIX}", options.prefix())
}

/// The name of the table of changes, prefix included: a routine records a
/// change there, and the change trigger makes it, in one statement.
pub fn changes_table(options: &PackageOptions) -> String {
    format!("{}{CHANGES_TABLE_SUFFIX}", options.prefix())
}

/// The name of the table of tracked periods, prefix included.
pub fn periods_table(options: &PackageOptions) -> String {
    format!("{}{PERIODS_TABLE_SUFFIX}", options.prefix())
}

/// The name of the table of buckets, prefix included.
pub fn buckets_table(options: &PackageOptions) -> String {
    format!("{}{BUCKETS_TABLE_SUFFIX}", options.prefix())
}

/// The name of the table of tracked writes, prefix included: a routine
/// records a write of a counter that tracks periods there, and its trigger
/// adds it to the slot and the buckets, in one statement.
pub fn tracked_writes_table(options: &PackageOptions) -> String {
    format!("{}{TRACKED_WRITES_TABLE_SUFFIX}", options.prefix())
}

/// The name of the table of spreads, prefix included: a routine records
/// there a write of a bounded counter that its slot could not take alone
/// (or new bounds, or a reset), and its trigger locks every slot of the
/// counter, checks the bound and spreads the new total over the slots, in
/// one statement.
pub fn spreads_table(options: &PackageOptions) -> String {
    format!("{}{SPREADS_TABLE_SUFFIX}", options.prefix())
}

/// Every table of the package, prefix included: the slots, the write ids,
/// the changes, the tracked periods, their buckets, the tracked writes and
/// the spreads.
pub fn tables(options: &PackageOptions) -> [String; 7] {
    [
        options.table().to_owned(),
        writes_table(options),
        changes_table(options),
        periods_table(options),
        buckets_table(options),
        tracked_writes_table(options),
        spreads_table(options),
    ]
}

/// Whether the package made with `options` has the table of changes: for
/// resizes and compactions, and for the reset of a lazy or a cluster's
/// package, which its trigger makes.
pub fn has_changes_table(options: &PackageOptions) -> bool {
    options.features().has(Feature::Resize) || options.auto_create() || options.cluster().is_some()
}

/// Whether the package made with `options` has the table of write ids:
/// for writes with ids, and for batches, which record one of their own.
pub fn has_writes_table(options: &PackageOptions) -> bool {
    let features = options.features();
    features.has(Feature::Batches) || features.has(Feature::WriteIds)
}

/// Whether each of [`tables`] is in the package made with `options`, in
/// the same order: the slots always; the write ids ([`has_writes_table`]);
/// the changes ([`has_changes_table`]); the periods' three with
/// periods; the spreads with bounds.
fn tables_present(options: &PackageOptions) -> [bool; 7] {
    let features = options.features();
    let periods = features.has(Feature::Periods);
    [
        true,
        has_writes_table(options),
        has_changes_table(options),
        periods,
        periods,
        periods,
        features.has(Feature::Bounds),
    ]
}

/// The tables the package made with `options` creates, as [`tables`]
/// orders them: its features' and the slots.
pub fn tables_in_package(options: &PackageOptions) -> Vec<String> {
    tables(options)
        .into_iter()
        .zip(tables_present(options))
        .filter_map(|(table, present)| present.then_some(table))
        .collect()
}

/// The tables whose rows a trigger applies in the statement that writes
/// them, prefix included: the write ids, the changes, the tracked writes
/// and the spreads. Each has a [`PENDING_COLUMN`] and an
/// [`applied_check`] on it.
pub fn applied_tables(options: &PackageOptions) -> [String; 4] {
    [writes_table(options), changes_table(options), tracked_writes_table(options), spreads_table(options)]
}

/// The [`applied_tables`] the package made with `options` creates.
pub fn applied_tables_in_package(options: &PackageOptions) -> Vec<String> {
    let present = tables_in_package(options);
    applied_tables(options).into_iter().filter(|table| present.contains(table)).collect()
}

/// The triggers the package made with `options` creates, as
/// [`trigger_names`] orders them: each applied table's, and the slot
/// bound's two on the slot table beside any of them. A classic package
/// has none: its routines keep the slot bound in their own statements.
pub fn triggers_in_package(options: &PackageOptions) -> Vec<String> {
    let applied = applied_tables_in_package(options);
    let [insert, update, rest @ ..] = triggers_with_tables(options);
    let slot_bound = if applied.is_empty() { Vec::new() } else { vec![insert.0, update.0] };
    slot_bound
        .into_iter()
        .chain(rest.into_iter().filter(|(_, table)| applied.contains(table)).map(|(trigger, _)| trigger))
        .collect()
}

/// The column a routine sets to TRUE in each row a trigger must apply, and
/// the trigger clears as it applies the row: MySQL replaces a trigger with
/// `DROP TRIGGER` and then `CREATE TRIGGER`, and a write between the two
/// (on a cluster, on any member) would be recorded with nothing applied.
pub const PENDING_COLUMN: &str = "pending";

/// The CHECK of `table` (one of [`applied_tables`]) that refuses a row
/// still pending: a write that found its trigger missing fails with it,
/// and may be sent again, instead of being recorded uncounted.
pub fn applied_check(table: &str) -> String {
    format!("{table}{APPLIED_CHECK_SUFFIX}")
}

/// Whether a server error is a package's [`applied_check`] refusing a row
/// whose trigger was missing, as for a moment while a re-install on MySQL
/// replaces the trigger: the write changed nothing and may be sent again.
/// MySQL reports it as 3819, MariaDB as 4025, each naming the check.
pub fn is_missing_trigger(code: u16, message: &str) -> bool {
    matches!(code, server_errno::CHECK_CONSTRAINT_VIOLATED | server_errno::CONSTRAINT_FAILED)
        && message.contains(APPLIED_CHECK_SUFFIX)
}

/// Whether a server error is a trigger that failed to load as the
/// statement opened its table, as MariaDB on a Galera node fails writes for
/// about a second while the node applies a re-install's `CREATE OR REPLACE
/// TRIGGER` (242 writes in a run of 80 re-installs, on the two other
/// nodes): a parse error (1064). The clients' statements parse on every
/// server they serve, so a 1064 on one is a stored body the server could
/// not load, whatever language its message is in; the statement failed
/// before it changed a row, and may be sent again.
pub fn is_trigger_being_replaced(code: u16) -> bool {
    code == server_errno::PARSE_ERROR
}

/// Whether a server error is Group Replication's rollback of a local
/// transaction for a remote one that needed its locks: 1180 at COMMIT
/// naming storage engine error 149 (`HA_ERR_LOCK_DEADLOCK`). The number is
/// the first in the message in every language the servers translate it
/// into (`Got error 149 - '...' during COMMIT`, `Fehler 149 - '...' beim
/// COMMIT`), so it is read as a number, not as words.
pub fn is_commit_deadlock(code: u16, message: &str) -> bool {
    code == server_errno::ERROR_DURING_COMMIT && first_number(message) == Some(HANDLER_LOCK_DEADLOCK)
}

/// `HA_ERR_LOCK_DEADLOCK`, the storage engine error that 1180 names when
/// Group Replication rolled a transaction back.
const HANDLER_LOCK_DEADLOCK: u32 = 149;

/// The first run of ASCII digits in `message`, as a number.
fn first_number(message: &str) -> Option<u32> {
    let start = message.find(|c: char| c.is_ascii_digit())?;
    let digits = &message[start..];
    let end = digits.find(|c: char| !c.is_ascii_digit()).unwrap_or(digits.len());
    digits[..end].parse().ok()
}

/// A table or the view of the package, as an install meets it: it creates
/// or upgrades the object of this name, and refuses to touch one without
/// these columns (another application's), or a view where the package has
/// a table, or the other way round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relation {
    pub name: String,
    /// Whether it is a view, not a table.
    pub is_view: bool,
    /// Columns every version of the package gave it: an object of this name
    /// that lacks one is not the package's.
    pub identifying_columns: &'static [&'static str],
}

/// A feature the package made with `options` lacks, with the routines it
/// would have brought (the routines of two features under the first of
/// them the package lacks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LackedFeature {
    pub feature: Feature,
    pub routines: Vec<Routine>,
}

/// The features the package made with `options` lacks, each with its
/// routines: an install over a package that has them refuses to go on
/// unless the DBA names them ([`DROP_FEATURES_VARIABLE`]).
pub fn lacked_features(options: &PackageOptions) -> Vec<LackedFeature> {
    let features = options.features();
    Feature::ALL
        .into_iter()
        .filter(|&feature| !features.has(feature))
        .map(|feature| LackedFeature {
            feature,
            routines: Routine::ALL
                .into_iter()
                .filter(|routine| routine.needs().missing_from(features).iter().next() == Some(feature))
                .collect(),
        })
        .collect()
}

/// The `sql_mode` every routine and trigger of the package is created in,
/// whatever the installing session's: each runs in the mode it was created
/// in, so the package behaves the same whoever installed it. MySQL 8.0's
/// default; MariaDB knows each of its modes.
pub const ROUTINE_SQL_MODE: &str = "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION";

/// The session variable that keeps the installing session's own `sql_mode`
/// while a script creates the package in [`ROUTINE_SQL_MODE`]; the script
/// gives it back at its end.
pub const INSTALLER_SQL_MODE_VARIABLE: &str = "@slotted_counters_installer_sql_mode";

/// The session variable in which `install --drop-features` names, as
/// `--features` does, the installed features a package with fewer may
/// drop: its probe then lets the install go on, and `install` drops their
/// routines, triggers and view afterwards; their tables stay.
pub const DROP_FEATURES_VARIABLE: &str = "@slotted_counters_drop_features";

/// The read of the width of names a table holds (the table's name its
/// parameter), which may be less than the options say for a table an
/// earlier version made: no row for no such table, or an engine that does
/// not say.
pub const NAME_WIDTH_SQL: &str = "SELECT CAST(`CHARACTER_MAXIMUM_LENGTH` AS SIGNED) FROM information_schema.`COLUMNS` \
     WHERE `TABLE_SCHEMA` = DATABASE() AND `TABLE_NAME` = ? AND `COLUMN_NAME` = 'counter_name'";

/// Every table of the package and its views, as [`tables`] orders the
/// tables, the views last: those of every feature, as an install refuses
/// an object of one of their names that is not the package's.
pub fn relations(options: &PackageOptions) -> Vec<Relation> {
    const IDENTIFYING: [&[&str]; 7] = [
        &["counter_name", "counter_id", "counter"],
        &["write_id", "written_at"],
        &["counter_name", "change_kind"],
        &["counter_name", "period", "keep"],
        &["counter_name", "period", "bucket_start", "counter_id", "counter"],
        &["counter_name", "counter_id", "delta", "counted_at"],
        &["counter_name", "spread_kind"],
    ];
    tables(options)
        .into_iter()
        .zip(IDENTIFYING)
        .map(|(name, identifying_columns)| Relation { name, is_view: false, identifying_columns })
        .chain([
            Relation {
                name: totals_view(options),
                is_view: true,
                identifying_columns: &["counter_name", "total"],
            },
            Relation {
                name: rooms_view(options),
                is_view: true,
                identifying_columns: &["counter_name", "kind", "room"],
            },
        ])
        .collect()
}

/// Each trigger of the package, as [`trigger_names`] orders them, with the
/// table it is on: an install refuses to replace a trigger of that name on
/// another table.
pub fn triggers_with_tables(options: &PackageOptions) -> [(String, String); 6] {
    let [insert, update, apply_write, apply_change, apply_tracked_write, apply_spread] =
        trigger_names(options);
    [
        (insert, options.table().to_owned()),
        (update, options.table().to_owned()),
        (apply_write, writes_table(options)),
        (apply_change, changes_table(options)),
        (apply_tracked_write, tracked_writes_table(options)),
        (apply_spread, spreads_table(options)),
    ]
}

/// The events the docs suggest for the features of the package made with
/// `options`, prefix included: one that forgets old write ids every minute
/// (write ids), one that expires buckets every hour (periods).
/// Uninstalling leaves them (a DBA made them) and names them.
pub fn documented_events(options: &PackageOptions) -> Vec<String> {
    [(Feature::WriteIds, "forget_writes_every_minute"), (Feature::Periods, "expire_periods_hourly")]
        .into_iter()
        .filter(|&(feature, _)| options.features().has(feature))
        .map(|(_, event)| format!("{}{event}", options.prefix()))
        .collect()
}

/// What every routine's COMMENT begins with, in every version: an install
/// replaces no routine of the package's names whose COMMENT does not.
pub const ROUTINE_MARK: &str = "slotted-counters";

/// The longest window `counter_forget_writes` takes: 100 years, well
/// within the dates the servers compute with.
pub const FORGET_LIMIT: std::time::Duration = std::time::Duration::from_secs(3_153_600_000);

/// The most ids `counter_forget_writes` deletes in one statement, so that
/// each of its transactions stays short.
pub const FORGET_BATCH: u32 = 1_000;

/// The most characters of a refusal's message: the routines cut a longer
/// one (`LEFT(..., 128)`, into a variable this wide), and the client's own
/// refusals are cut the same way.
pub const MESSAGE_LENGTH: u32 = 128;

/// What `counter_package()` answers: [`ROUTINE_MARK`], this version and the
/// flags of `generate` that made the package, `--features` among them
/// unless it has them all.
pub fn package_line(options: &PackageOptions) -> String {
    format!("{ROUTINE_MARK} {} {}", env!("CARGO_PKG_VERSION"), flags(options).join(" "))
}

/// The features a [`package_line`] names: all of them when it has no
/// `--features`. `None` for a line this package does not write.
pub fn features_in_line(line: &str) -> Option<Features> {
    let mut words = line.split_whitespace();
    if words.next() != Some(ROUTINE_MARK) {
        return None;
    }
    match words.skip_while(|&word| word != "--features").nth(1) {
        Some(features) => features.parse().ok(),
        None => Some(Features::ALL),
    }
}

/// The SQLSTATE of every refusal of the package: class 23, integrity
/// constraint violation, as the servers' own 1062 (duplicate key) and 1452
/// (missing parent row) carry. JDBC drivers choose the exception class by
/// SQLSTATE class, and 23 is the one every driver reads as a permanent data
/// error: MariaDB Connector/J and MySQL Connector/J raise
/// `SQLIntegrityConstraintViolationException` for it. The generic `45000`
/// ("unhandled user-defined exception") became a
/// `SQLTransientConnectionException` in MariaDB Connector/J, which retry
/// layers then retry, and class 22 (data exception) a
/// `SQLSyntaxErrorException` there.
pub const REFUSAL_SQLSTATE: &str = "23000";

/// `MYSQL_ERRNO` of the package's errors, all raised with [`REFUSAL_SQLSTATE`].
///
/// Every common client must read them as documented: at most 32767 (PyMySQL
/// decodes error numbers as signed 16-bit, so 61001 arrived as -4535), and
/// outside the ranges the servers send themselves: MySQL 8.4 uses 1-999
/// (global), 1000-1999 and 3000-5999 (server), 2000-2999 (client) and 10000
/// and up (error log); MariaDB 11 uses 1000-1999, 3000-3999 and 4000-4299.
pub mod errno {
    /// The named counter does not exist.
    pub const UNKNOWN_COUNTER: u16 = 9_001;
    /// `setup` was asked to create a counter that already exists.
    pub const ALREADY_EXISTS: u16 = 9_002;
    /// An argument is NULL, empty, too long or out of range.
    pub const INVALID_ARGUMENT: u16 = 9_003;
    /// A write would take a bounded counter's total past its floor or its
    /// ceiling (`counter_bound`): it changed nothing.
    pub const PAST_BOUND: u16 = 9_004;
    /// `setup.sql` refused to install before it changed anything: the
    /// server is older than the package needs, or an object of one of the
    /// package's names is not the package's.
    pub const INSTALL_REFUSED: u16 = 9_005;
}

/// The servers' own error numbers that the client and the tool act on, by
/// the names MySQL's manual gives them; MariaDB sends the same numbers.
pub mod server_errno {
    /// `ER_CHECKREAD`, "Record has changed since last read": MariaDB's
    /// snapshot isolation (`innodb_snapshot_isolation`, on by default from
    /// 11.6) refused a write to a row changed after the transaction's read
    /// view opened, and rolled the whole transaction back, as for a
    /// deadlock. It may run again.
    pub const RECORD_CHANGED: u16 = 1_020;
    /// `ER_DBACCESS_DENIED_ERROR`: no privilege on the database.
    pub const DATABASE_ACCESS_DENIED: u16 = 1_044;
    /// `ER_ACCESS_DENIED_ERROR`: the login was refused; MariaDB also
    /// answers it to a plain connection when the account requires TLS.
    pub const ACCESS_DENIED: u16 = 1_045;
    /// `ER_TABLEACCESS_DENIED_ERROR`: no privilege on the table or view.
    pub const TABLE_ACCESS_DENIED: u16 = 1_142;
    /// `ER_COLUMNACCESS_DENIED_ERROR`: no privilege on a column.
    pub const COLUMN_ACCESS_DENIED: u16 = 1_143;
    /// `ER_DUP_ENTRY`: a row with the same key exists, as a counter a
    /// plain setup creates again.
    pub const DUPLICATE_KEY: u16 = 1_062;
    /// `ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION`: a write inside a
    /// transaction started `READ ONLY`.
    pub const READ_ONLY_TRANSACTION: u16 = 1_792;
    /// `ER_OPTION_PREVENTS_STATEMENT`: an option of the server forbids the
    /// statement. For a counter call that is `read_only` or
    /// `super_read_only`, as on a replica: the other options it names
    /// (`--secure-file-priv`, `--skip-grant-tables`) forbid statements no
    /// call sends.
    pub const OPTION_PREVENTS_STATEMENT: u16 = 1_290;
    /// What a server sends for a write it refuses as read-only: the
    /// server's (`read_only`) or the transaction's.
    pub const READ_ONLY: [u16; 2] = [OPTION_PREVENTS_STATEMENT, READ_ONLY_TRANSACTION];
    /// `ER_BAD_FIELD_ERROR`: no such column.
    pub const NO_SUCH_COLUMN: u16 = 1_054;
    /// `ER_PARSE_ERROR`: a statement, or a trigger's body as the server
    /// loads it, that does not parse.
    pub const PARSE_ERROR: u16 = 1_064;
    /// `ER_NO_SUCH_TABLE`.
    pub const NO_SUCH_TABLE: u16 = 1_146;
    /// `ER_UNKNOWN_SYSTEM_VARIABLE`: the server has no such variable, as
    /// MySQL has no `wsrep_on` and MariaDB no Group Replication's.
    pub const UNKNOWN_SYSTEM_VARIABLE: u16 = 1_193;
    /// `ER_ERROR_DURING_COMMIT`: a storage engine error at COMMIT, named in
    /// the message. Group Replication raises it with error 149
    /// (`HA_ERR_LOCK_DEADLOCK`) when it rolled a local transaction back for
    /// a remote one that needed its locks.
    pub const ERROR_DURING_COMMIT: u16 = 1_180;
    /// `ER_LOCK_WAIT_TIMEOUT`: the statement was rolled back (only it, by
    /// default), and may run again.
    pub const LOCK_WAIT_TIMEOUT: u16 = 1_205;
    /// `ER_LOCK_DEADLOCK`: the transaction was rolled back, and may run again.
    pub const DEADLOCK: u16 = 1_213;
    /// `ER_NOT_SUPPORTED_YET`: the engine does not run this form of
    /// statement, as Vitess answers a query it cannot plan ("VT12001:
    /// unsupported: ...").
    pub const NOT_SUPPORTED_YET: u16 = 1_235;
    /// `ER_SPECIFIC_ACCESS_DENIED_ERROR`: the account lacks a privilege the
    /// statement needs, such as TRIGGER for `SHOW CREATE TRIGGER`.
    pub const SPECIFIC_ACCESS_DENIED: u16 = 1_227;
    /// `ER_SP_DOES_NOT_EXIST`: the routine is missing, as during a reinstall
    /// on MySQL. The call ran nothing.
    pub const NO_SUCH_ROUTINE: u16 = 1_305;
    /// The same number for a savepoint that does not exist: outside a
    /// transaction, `SAVEPOINT` in autocommit mode kept none.
    pub const NO_SUCH_SAVEPOINT: u16 = NO_SUCH_ROUTINE;
    /// `ER_TRG_DOES_NOT_EXIST`: no trigger of that name.
    pub const NO_SUCH_TRIGGER: u16 = 1_360;
    /// `ER_NEED_REPREPARE`: the tables of a prepared statement changed
    /// under it each time the server prepared it again, as while a
    /// re-install replaces their triggers; the statement did not run.
    pub const NEED_REPREPARE: u16 = 1_615;
    /// `ER_PROCACCESS_DENIED_ERROR`: no EXECUTE on the routine.
    pub const ROUTINE_ACCESS_DENIED: u16 = 1_370;
    /// `ER_BINLOG_CREATE_ROUTINE_NEED_SUPER`: with binary logging on, only an
    /// account with SUPER (or `log_bin_trust_function_creators=1`) may
    /// create a function.
    pub const CREATE_ROUTINE_NEEDS_SUPER: u16 = 1_419;
    /// MySQL's `ER_CHECK_CONSTRAINT_VIOLATED`: a row failed a CHECK.
    pub const CHECK_CONSTRAINT_VIOLATED: u16 = 3_819;
    /// MariaDB's `ER_CONSTRAINT_FAILED`: a row failed a CHECK.
    pub const CONSTRAINT_FAILED: u16 = 4_025;
    /// `ER_DATA_OUT_OF_RANGE`: a value left its type's range, as a slot
    /// would past BIGINT's.
    pub const OUT_OF_RANGE: u16 = 1_690;
    /// `ER_TRANSACTION_ROLLBACK_DURING_COMMIT`: Group Replication rolled the
    /// transaction back at COMMIT, having certified a conflicting one from
    /// another member first. It may run again.
    pub const CERTIFICATION_FAILED: u16 = 3_101;
    /// `ER_SECURE_TRANSPORT_REQUIRED`: MySQL refused a plain connection to
    /// a server that requires TLS.
    pub const SECURE_TRANSPORT_REQUIRED: u16 = 3_159;
    /// `ER_QUERY_INTERRUPTED`. Vitess also sends it for a gRPC `Aborted`
    /// error that carries no MySQL number (go/mysql/sqlerror/sql_error.go,
    /// `NewSQLErrorFromError`), with `code = Aborted` in the message: a
    /// transaction that vttablet rolled back (its timeout, a shard's
    /// failover), which changed nothing and may run again.
    pub const QUERY_INTERRUPTED: u16 = 1_317;
    /// TiDB's own numbers for a transaction it rolled back, which "the
    /// application can safely retry" (TiDB's error-codes page): a `SELECT
    /// ... FOR UPDATE` transaction with a commit conflict (8002), a write
    /// conflict with a stale start timestamp (8005), a commit that failed
    /// and was rolled back (8022), a schema changed during the transaction
    /// (8028), and a pessimistic write conflict (9007).
    pub const TIDB_RETRYABLE: [u16; 5] = [8_002, 8_005, 8_022, 8_028, 9_007];
}

/// Most counters one `counter_add_many` call takes.
pub const BATCH_LIMIT: u32 = 4_096;

/// Most bytes of JSON one `counter_add_many` call takes, for a package whose
/// names hold up to `name_length` characters: room for [`BATCH_LIMIT`]
/// entries of the longest names with every character escaped as a
/// surrogate pair (12 bytes), the longest delta and some whitespace. A
/// longer text is refused before any JSON function reads it: MariaDB's
/// `JSON_KEYS` compares each key with every one before it, so a batch's
/// cost grows with its keys times their length.
pub fn batch_bytes(name_length: u32) -> u64 {
    u64::from(BATCH_LIMIT) * (12 * u64::from(name_length) + 64)
}

/// Width of the `description` column, in characters.
pub const DESCRIPTION_LENGTH: u32 = 255;

/// The table of a Group Replication group's members, which the routines of
/// a `--cluster group-replication` package read to find their member's
/// position. MySQL has it, with or without the plugin; MariaDB does not.
pub const GROUP_MEMBERS_TABLE: &str = "performance_schema.replication_group_members";

/// The package's triggers, prefix included, in the order of
/// [`TRIGGER_SUFFIXES`].
pub fn trigger_names(options: &PackageOptions) -> [String; 6] {
    TRIGGER_SUFFIXES.map(|suffix| format!("{}{suffix}", options.prefix()))
}

/// The grants keeper of the package made with `options`, prefix included.
pub fn grants_keeper_name(options: &PackageOptions) -> String {
    format!("{}{GRANTS_KEEPER_SUFFIX}", options.prefix())
}

/// The throwaway function an install creates and drops first, prefix included.
pub fn probe_name(options: &PackageOptions) -> String {
    format!("{}{PROBE_SUFFIX}", options.prefix())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::Feature;

    #[test]
    fn a_package_line_names_the_features_its_package_has() {
        for features in ["all", "none", "periods", "batches,write-ids", "resize,bounds"] {
            let features: Features = features.parse().unwrap();
            let options = PackageOptions::builder().features(features).build().unwrap();
            assert_eq!(features_in_line(&package_line(&options)), Some(features), "{features}");
        }
        let periods = features_in_line("slotted-counters 0.2.0 --table t --features periods").unwrap();
        assert!(periods.has(Feature::Periods) && !periods.has(Feature::Bounds));
    }

    #[test]
    fn a_line_of_another_making_names_no_features() {
        for line in ["", "counters 0.1.0", "slotted-counters 0.1.0 --features nonsense"] {
            assert_eq!(features_in_line(line), None, "{line}");
        }
    }
}
