//! The committed packages, installed into a real server and exercised from Rust.
//!
//! Every behaviour runs three times: on `generated/` (slot counts chosen per
//! counter), on `generated/fixed-slots-64/` (64 slots hard-coded), and on
//! `generated/` in a latin1 database, where every text variable without a
//! character set of its own would take latin1; the core's, a fourth time, on
//! `generated/classic/`, which has no feature, no trigger and one table.

mod basics;
mod batches;
mod concurrency;
pub(crate) mod escaped_batches;
mod names;

use std::path::PathBuf;

use mysql::prelude::Queryable;
use mysql::{Params, PooledConn};
use slotted_counters_cli::script;
use slotted_counters_core::{Feature, Features};

use crate::support::{self, Database, server_error};

/// One committed package variant.
struct Package {
    dir: &'static str,
    /// The hard-coded slot count, for the fixed-slot package.
    fixed_slots: Option<u32>,
    /// The default character set of the databases it is installed into.
    charset: &'static str,
    /// What it holds beside the core.
    features: Features,
}

const DEFAULT: Package =
    Package { dir: "generated", fixed_slots: None, charset: "utf8mb4", features: Features::ALL };
const FIXED_64: Package = Package {
    dir: "generated/fixed-slots-64",
    fixed_slots: Some(64),
    charset: "utf8mb4",
    features: Features::ALL,
};
const IN_LATIN1: Package =
    Package { dir: "generated", fixed_slots: None, charset: "latin1", features: Features::ALL };
const CLASSIC: Package =
    Package { dir: "generated/classic", fixed_slots: None, charset: "utf8mb4", features: Features::NONE };

impl Package {
    fn setup_sql(&self) -> PathBuf {
        support::committed_setup_sql(self.dir)
    }

    /// Installs the package through the library's script runner.
    fn install(&self, db: &Database) {
        support::install_committed(db, self.dir);
    }

    /// A fresh database in the package's character set.
    fn empty_database(&self) -> Database {
        Database::with_charset(self.charset)
    }

    /// A shared database with the package installed.
    fn database(&self) -> Database {
        let script = std::fs::read_to_string(self.setup_sql()).expect("read setup.sql");
        Database::shared(&script, self.charset)
    }

    /// A database of the test's own with the package installed, for a test
    /// that installs it again.
    fn own_database(&self) -> Database {
        let db = self.empty_database();
        self.install(&db);
        db
    }

    /// The routines it has, by name: the classic package's seven, or every
    /// routine of its slot policy.
    fn routines(&self) -> Vec<&'static str> {
        if self.features.is_empty() {
            return support::CLASSIC_ROUTINES.to_vec();
        }
        support::routines(self.fixed_slots.is_some())
    }

    /// Whether the package holds `feature`.
    fn has(&self, feature: Feature) -> bool {
        self.features.has(feature)
    }

    /// The slot count a setup asking for `wanted` slots gets: the fixed
    /// package only accepts its own count.
    fn slots(&self, wanted: u32) -> u32 {
        self.fixed_slots.unwrap_or(wanted)
    }
}

/// Declares each behaviour once per committed package and server, as
/// `<package>::<behaviour>::mariadb` and `::mysql`: the core's on every
/// package, the classic one included; the batches' on those with batches.
macro_rules! for_each_package {
    (core: [$($core:ident::$core_behaviour:ident),* $(,)?] batches: [$($area:ident::$behaviour:ident),* $(,)?]) => {
        for_each_package!(@package default_package DEFAULT $($core::$core_behaviour,)* $($area::$behaviour),*);
        for_each_package!(@package fixed_slots_64 FIXED_64 $($core::$core_behaviour,)* $($area::$behaviour),*);
        for_each_package!(@package default_package_in_latin1 IN_LATIN1 $($core::$core_behaviour,)* $($area::$behaviour),*);
        for_each_package!(@package classic_package CLASSIC $($core::$core_behaviour),*);
    };
    (@package $module:ident $package:ident $($area:ident::$behaviour:ident),*) => {
        mod $module {
            $(fn $behaviour() { super::$area::$behaviour(&super::$package) })*
            crate::support::on_each_server!($($behaviour),*);
        }
    };
}

for_each_package!(
    core: [
    basics::walkthrough_gives_documented_results,
    basics::client_installs_setup_sql_from_another_folder,
    basics::sourcing_setup_twice_keeps_every_count,
    basics::errors_name_the_counter_and_change_nothing,
    basics::get_of_unknown_counter_is_null,
    basics::fractional_numbers_are_refused,
    names::names_compare_as_written,
    names::names_that_look_like_sql_stay_data,
    concurrency::increment_locks_one_row,
    concurrency::broken_increment_is_caught,
    concurrency::every_increment_updates_one_existing_slot,
    concurrency::off_by_one_slot_is_caught,
    concurrency::slots_are_used_uniformly,
    concurrency::concurrent_increments_and_adds_are_exact,
    concurrency::increment_never_recreates_a_deleted_counter,
    concurrency::reset_keeps_later_increments,
    ]
    batches: [
    batches::add_many_adds_each_delta_to_its_counter,
    batches::add_many_is_all_or_nothing,
    batches::add_many_locks_one_slot_per_counter,
    batches::concurrent_batches_do_not_deadlock,
    escaped_batches::an_escaped_key_counts,
    escaped_batches::add_many_adds_exactly_the_decoded_keys,
    escaped_batches::a_name_written_twice_never_counts_twice,
    ]
);

pub(super) fn call(conn: &mut PooledConn, sql: &str, params: impl Into<Params>) -> Result<(), (u16, String)> {
    conn.exec_drop(sql, params).map_err(server_error)
}

support::on_each_server!(runner_reports_the_failing_statement);

fn runner_reports_the_failing_statement() {
    let db = Database::new();
    let script = "CREATE TABLE first (x INT);\n-- a comment\nINSERT INTO first\n  VALUES ('not a number', 2);\nCREATE TABLE never (x INT);\n";
    let error = script::run(&mut db.conn(), script).unwrap_err();
    let message = error.to_string();
    assert!(message.starts_with("statement 2 (line 3) failed: `INSERT INTO first`: "), "{message}");
    assert!(message.contains("1136"), "the server's error is included: {message}");
    let tables: Vec<String> = db.conn().query("SHOW TABLES").unwrap();
    assert_eq!(tables, ["first"], "nothing after the failure ran");
}
