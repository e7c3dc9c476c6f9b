//! How a client makes its calls: through the package's routines, or in
//! plain SQL for engines that run none. Both describe the same calls, and
//! the same runners run either.
//!
//! A routine-mode client sends one call otherwise, where the package lets
//! it: a coalesced flush's sum for one counter ([`Call::FlushAdd`]) goes as
//! the plain mode's one UPDATE of a slot, when the counter tracks no period
//! and the slot takes the sum alone, and as the `CALL` otherwise; and never
//! on a multi-primary cluster, whose package picks each node's slots. One
//! client's flush then takes 1.2-1.35 times a bare one-row commit, where
//! the `CALL` took 1.5-2.3 times (docs/benchmarks.md).

use std::borrow::Cow;
use std::sync::atomic::{AtomicU8, Ordering};

use slotted_counters_core::PackageOptions;
use slotted_counters_core::package::server_errno;

use crate::call::{Answer, Call};
use crate::driver::{Connection, Owner, Statement};
use crate::error::CounterError;
use crate::plain::Plain;
use crate::routines::Routines;

#[derive(Debug)]
#[allow(clippy::large_enum_variant, reason = "one per client, made once and never moved on a hot path")]
pub enum Mode {
    Routines {
        routines: Routines,
        /// The flushes' one-statement writes; none for a package whose
        /// slots only its routines pick (a cluster's node slots) or whose
        /// rows an increment creates.
        direct: Option<Direct>,
    },
    Plain(Plain),
}

/// A routine-mode client's flushes as single UPDATEs of the package's
/// table, once the server proved to be no member of a multi-primary
/// cluster, and until it refuses the account that.
#[derive(Debug)]
pub struct Direct {
    plain: Plain,
    /// What the client knows of whether it may write the table itself:
    /// [`UNKNOWN`], [`ALLOWED`] or [`REFUSED`].
    may: AtomicU8,
}

/// Not known yet: the server is asked at the first flush.
const UNKNOWN: u8 = 0;
/// The server is in no multi-primary cluster, and the account may write
/// the table.
const ALLOWED: u8 = 1;
/// Every flush calls the routine: the server is a Galera node or a Group
/// Replication member, where a package generated for it picks each node's
/// slots and a client made without its options cannot tell (the default
/// options say no cluster); or the account has EXECUTE on the routines but
/// no privilege on their table, as a DBA may grant it.
const REFUSED: u8 = 2;

/// Each asks whether the server is a member of a kind of multi-primary
/// cluster; a server without that kind's variable (1193) is not.
const CLUSTER_PROBES: [&str; 2] =
    ["SELECT CAST(@@global.wsrep_on AS SIGNED)", "SELECT @@global.group_replication_group_name IS NOT NULL"];

impl Mode {
    /// Calls the routines of a package generated with `options`.
    pub(crate) fn routines(options: &PackageOptions) -> Self {
        let direct = Plain::new(options)
            .ok()
            .filter(|_| !options.auto_create())
            .map(|plain| Direct { plain, may: AtomicU8::new(UNKNOWN) });
        Mode::Routines { routines: Routines::new(options), direct }
    }

    /// Runs `call` once on `conn`, which `owner`'s transaction may hold.
    /// An error about the counter the call names carries its name, which a
    /// refusal cut at the routines' message length lost.
    pub(crate) async fn run(
        &self,
        conn: &mut impl Connection,
        call: Call<'_>,
        owner: Owner,
    ) -> Result<Answer, CounterError> {
        let outcome = self.run_unnamed(conn, call, owner).await;
        match call.counter() {
            Some(name) => outcome.map_err(|error| error.about(name)),
            None => outcome,
        }
    }

    async fn run_unnamed(
        &self,
        conn: &mut impl Connection,
        call: Call<'_>,
        owner: Owner,
    ) -> Result<Answer, CounterError> {
        match self {
            Mode::Routines { routines, direct: Some(direct) } => {
                if let Call::FlushAdd { name, delta, .. } = call
                    && direct.add(conn, name, delta).await?
                {
                    return Ok(Answer::Done);
                }
                routines.run(conn, call).await
            }
            Mode::Routines { routines, direct: None } => routines.run(conn, call).await,
            Mode::Plain(plain) => plain.run(conn, call, owner).await,
        }
    }
}

impl Direct {
    /// Adds `delta` to counter `name` in one UPDATE: whether it did, or
    /// the routine is to be called.
    async fn add(&self, conn: &mut impl Connection, name: &str, delta: i64) -> Result<bool, CounterError> {
        match self.may.load(Ordering::Relaxed) {
            REFUSED => return Ok(false),
            ALLOWED => {}
            _ if in_a_cluster(conn).await? => {
                log::info!(
                    "the server is a cluster's member: flushes call the routine, which picks its slots"
                );
                self.may.store(REFUSED, Ordering::Relaxed);
                return Ok(false);
            }
            _ => self.may.store(ALLOWED, Ordering::Relaxed),
        }
        match self.plain.add_untracked(conn, name, delta).await {
            Err(error)
                if matches!(
                    error.code(),
                    Some(server_errno::TABLE_ACCESS_DENIED | server_errno::COLUMN_ACCESS_DENIED)
                ) =>
            {
                log::info!(error:%; "the account may not write the counters' table ({error}): flushes call the routine");
                self.may.store(REFUSED, Ordering::Relaxed);
                Ok(false)
            }
            added => added,
        }
    }
}

/// Whether the server on `conn` is a Galera node or a Group Replication
/// member ([`CLUSTER_PROBES`]).
async fn in_a_cluster(conn: &mut impl Connection) -> Result<bool, CounterError> {
    for probe in CLUSTER_PROBES {
        let statement = Statement { sql: Cow::Borrowed(probe), params: Vec::new() };
        match conn.rows(&statement).await {
            Err(error) if error.code() == Some(server_errno::UNKNOWN_SYSTEM_VARIABLE) => {}
            Err(error) => return Err(error),
            Ok(rows) if rows.first().and_then(|row| row.first().copied().flatten()).unwrap_or(0) != 0 => {
                return Ok(true);
            }
            Ok(_) => {}
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use slotted_counters_core::package::errno;
    use slotted_counters_core::plain::PlainSql;
    use slotted_counters_core::{Cluster, PackageOptions};

    use slotted_counters_core::package::server_errno::UNKNOWN_SYSTEM_VARIABLE;

    use super::CLUSTER_PROBES;
    use crate::call::Moment;
    use crate::driver::ready;
    use crate::engine::Engine;
    use crate::error::CounterError;
    use crate::scripted::{Arg, Reply, ScriptedDriver, answer};

    const ADD_AT: &str = "CALL `counter_add_at`(?, ?, UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND)";

    /// A MariaDB server of no Galera cluster, as the probes find it:
    /// `wsrep_on` off, no Group Replication variable; `steps` after.
    fn alone(steps: Vec<Reply>) -> Vec<Reply> {
        let mut script = vec![
            answer(CLUSTER_PROBES[0], Reply::Rows(vec![vec![Some(0)]])),
            answer(CLUSTER_PROBES[1], Reply::Error(UNKNOWN_SYSTEM_VARIABLE)),
        ];
        script.extend(steps);
        script
    }

    fn statements() -> PlainSql {
        PlainSql::new(&PackageOptions::default()).expect("the default package has a plain mode")
    }

    /// Flushes 32 to `views` through `engine`.
    fn flushed(engine: &Engine<ScriptedDriver>) -> Result<(), CounterError> {
        ready(engine.flush_add("views", 32, Moment::Since(Instant::now())))
    }

    /// An engine of a package of `options`, whose connection answers with `replies`.
    fn engine(options: &PackageOptions, replies: Vec<Reply>) -> Engine<ScriptedDriver> {
        Engine::new(ScriptedDriver::new(replies), options)
    }

    #[test]
    fn a_flush_to_a_counter_without_periods_is_one_update_of_a_slot() {
        use Reply::{Changed, Rows};
        let sql = statements();
        let update = sql.add_to_untracked_slot().sql;
        // The server probed once, the slot count read once.
        let steps = alone(vec![
            answer(&sql.last_slot().sql, Rows(vec![vec![Some(8)]])),
            answer(&update, Changed(1)),
            answer(&update, Changed(1)),
        ]);
        let engine = engine(&PackageOptions::default(), steps);
        flushed(&engine).unwrap();
        flushed(&engine).unwrap();
        assert!(engine.driver().script_done());
        let params = &engine.driver().sent()[3].params;
        assert_eq!(params[..2], [Arg::number(32), Arg::text("views")]);
        let slot = params[2].as_number().expect("a slot");
        assert!((1..=8).contains(&slot), "{params:?}");
        assert_eq!(params[6], Arg::number(7), "spread from the slot count: {params:?}");
        assert_eq!(params[9], Arg::text("views"), "the periods looked for by name: {params:?}");
    }

    #[test]
    fn a_flush_the_update_does_not_take_calls_the_routine() {
        use Reply::{Changed, Rows};
        let sql = statements();
        // Tracked periods, a slot short of room or removed: no row changed.
        let steps = alone(vec![
            answer(&sql.last_slot().sql, Rows(vec![vec![Some(8)]])),
            answer(&sql.add_to_untracked_slot().sql, Changed(0)),
            answer(ADD_AT, Changed(1)),
        ]);
        let engine = engine(&PackageOptions::default(), steps);
        flushed(&engine).unwrap();
        assert!(engine.driver().script_done());
        assert_eq!(engine.driver().sent()[4].params[..2], [Arg::text("views"), Arg::number(32)]);
    }

    #[test]
    fn a_flush_to_an_unknown_counter_hears_the_routines_refusal() {
        use Reply::{Error, Rows};
        let steps = alone(vec![
            answer(&statements().last_slot().sql, Rows(Vec::new())),
            answer(ADD_AT, Error(errno::UNKNOWN_COUNTER)),
        ]);
        let engine = engine(&PackageOptions::default(), steps);
        let error = flushed(&engine).unwrap_err();
        assert_eq!(error.code(), Some(errno::UNKNOWN_COUNTER));
        assert!(engine.driver().script_done());
    }

    #[test]
    fn an_account_that_may_not_write_the_table_flushes_through_the_routine_from_then_on() {
        use Reply::{Changed, Error, Rows};
        use slotted_counters_core::package::server_errno::TABLE_ACCESS_DENIED;
        let sql = statements();
        let steps = alone(vec![
            answer(&sql.last_slot().sql, Rows(vec![vec![Some(8)]])),
            answer(&sql.add_to_untracked_slot().sql, Error(TABLE_ACCESS_DENIED)),
            answer(ADD_AT, Changed(1)),
            answer(ADD_AT, Changed(1)),
        ]);
        let engine = engine(&PackageOptions::default(), steps);
        flushed(&engine).unwrap();
        flushed(&engine).unwrap();
        assert!(engine.driver().script_done());
    }

    #[test]
    fn a_cluster_members_flushes_call_the_routine_that_picks_its_slots() {
        use Reply::{Changed, Error, Rows};
        // A Galera node; a Group Replication member (MySQL has no wsrep_on).
        let galera = vec![answer(CLUSTER_PROBES[0], Rows(vec![vec![Some(1)]]))];
        let group = vec![
            answer(CLUSTER_PROBES[0], Error(UNKNOWN_SYSTEM_VARIABLE)),
            answer(CLUSTER_PROBES[1], Rows(vec![vec![Some(1)]])),
        ];
        for probes in [galera, group] {
            let mut steps = probes;
            // Asked once.
            steps.extend([answer(ADD_AT, Changed(1)), answer(ADD_AT, Changed(1))]);
            // Made with the default options, as the client cannot tell.
            let engine = engine(&PackageOptions::default(), steps);
            flushed(&engine).unwrap();
            flushed(&engine).unwrap();
            assert!(engine.driver().script_done());
        }
    }

    #[test]
    fn packages_whose_slots_only_their_routines_pick_flush_through_them() {
        let galera = PackageOptions::builder().cluster(Cluster::Galera).build().unwrap();
        let lazy = PackageOptions::builder().fixed_slots(8).auto_create(true).build().unwrap();
        for options in [galera, lazy] {
            let engine = engine(&options, vec![answer(ADD_AT, Reply::Changed(1))]);
            flushed(&engine).unwrap();
            assert!(engine.driver().script_done(), "{options:?}");
        }
    }

    #[test]
    fn a_flush_with_a_write_id_calls_the_routine_that_keeps_it() {
        let engine = engine(&PackageOptions::default(), vec![Reply::Changed(1)]).with_write_ids();
        flushed(&engine).unwrap();
        let sent = engine.driver().sent();
        assert_eq!(sent.len(), 1);
        assert!(sent[0].sql.starts_with("CALL `counter_add_many_at`(?, ?, UTC_TIMESTAMP(6)"), "{sent:?}");
        assert!(matches!(sent[0].params[0], Arg::Bytes(_)), "{sent:?}");
    }
}
