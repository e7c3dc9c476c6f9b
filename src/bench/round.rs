//! One benchmark round: its clients, started together at a barrier, each on
//! a connection of its own, and the figures they leave. Every round checks
//! its totals: the measured counters must grow by exactly the increments
//! the server acknowledged (fall by exactly the takes, for a stock). On a cluster, the server's counters are summed
//! over the nodes.

mod measures;

use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use indicatif::ProgressBar;
use mysql::prelude::Queryable;
use mysql::{PooledConn, Statement};

use super::floor::Floor;
use super::plan::{Budget, Case, ROUND_TIME_LIMIT, Think};
use super::report::{ClientOutcome, CoalescedFigures, Latencies, ReconcileFigures, RoundResult};
use super::variant::Variant;
use super::workbench::{ORDER_SQL, RECONCILE_SQL, REPLICATION_WAIT, SOURCE_SQL, Workbench};
use crate::error::Error;
use measures::ProcessCpu;
use slotted_counters::{Coalescing, Correction, CounterError, Counters, Reconcile};

impl Workbench {
    /// Runs one round and checks its totals; a coalesced round's flushes
    /// are set against `floor`'s bare commit, when it was measured.
    pub fn round(
        &self,
        case: Case,
        budget: Budget,
        progress: &ProgressBar,
        floor: Option<&Floor>,
    ) -> Result<RoundResult, Error> {
        let mut conn = self.pools[0].get_conn().map_err(Error::Query)?;
        if case.variant.profile().sells {
            self.restock(&mut conn, case)?;
        }
        let before = self.server_counters()?;
        let before_flushes = self.flush_stats(case.variant);
        let before_total = self.total(&mut conn, case)?;
        let before_cpu = ProcessCpu::now();

        let (started, outcomes, reconciles) = if case.variant.profile().is_async {
            let tasks = self.tasks.as_ref().expect("prepare makes the tasks' runtime for the async variants");
            let (started, outcomes) =
                tasks.round(case, budget, |client| self.targets(case, client), progress);
            (started, outcomes, None)
        } else {
            self.threads(case, budget, progress)?
        };
        let finished = outcomes.iter().map(|outcome| outcome.finished).max().unwrap_or(started);
        let seconds = finished.saturating_duration_since(started).as_secs_f64();

        let cpu = ProcessCpu::now().since(&before_cpu);
        let after = self.server_counters()?;
        let after_flushes = self.flush_stats(case.variant);
        let increments: u64 = outcomes.iter().map(|outcome| outcome.increments).sum();
        // What the counters moved by: a take lowers them.
        let moved = if case.variant.profile().takes { -(increments as i64) } else { increments as i64 };
        let after_total = self.total_after(&mut conn, case, before_total + moved)?;
        let mut latencies: Vec<Duration> =
            outcomes.iter().flat_map(|outcome| outcome.latencies.iter().copied()).collect();
        latencies.sort_unstable();
        let delta = |name: &str| Some(after.status.get(name)?.saturating_sub(*before.status.get(name)?));
        let since = |after: Option<u64>, before: Option<u64>| {
            after.zip(before).map(|(after, before)| after.saturating_sub(before))
        };
        Ok(RoundResult {
            variant: case.variant,
            label: case.label(),
            slots: case.slots,
            clients: case.clients,
            hold_ms: case.hold_ms,
            think_us: case.think_us,
            increments,
            errors: outcomes.iter().map(|outcome| outcome.errors).sum(),
            refused: outcomes.iter().map(|outcome| outcome.refused).sum(),
            deadlocks_seen: outcomes.iter().map(|outcome| outcome.deadlocks).sum(),
            seconds,
            increments_per_second: if seconds > 0.0 { increments as f64 / seconds } else { 0.0 },
            latency_ms: Latencies::of(&latencies),
            row_lock_waits: delta("Innodb_row_lock_waits"),
            row_lock_time_ms: delta("Innodb_row_lock_time"),
            certification_failures: delta("wsrep_local_cert_failures"),
            brute_force_aborts: delta("wsrep_local_bf_aborts"),
            group_replication_conflicts: since(after.group_conflicts, before.group_conflicts),
            server_deadlocks: since(after.deadlocks, before.deadlocks),
            coalesced: case.variant.profile().coalesces.then(|| {
                let round = after_flushes.since(&before_flushes);
                let flush_ms = round.mean_flush().as_secs_f64() * 1_000.0;
                CoalescedFigures {
                    pool_size: self.flushes,
                    flushes: round.flushes,
                    mean_batch: round.mean_batch(),
                    flushes_per_second: if seconds > 0.0 { round.flushes as f64 / seconds } else { 0.0 },
                    flush_ms,
                    flush_over_commit: floor.map(|floor| flush_ms / floor.commit_ms),
                }
            }),
            reconciles,
            client_cpu_us: cpu.per(increments),
            total_change: after_total - before_total,
            total_exact: after_total - before_total == moved,
        })
    }

    /// The counters of `case` after a round that should have brought them to
    /// `expected`. Other nodes' increments reach the first node a moment
    /// later: on a cluster, a total short of `expected` is read again for up
    /// to [`REPLICATION_WAIT`].
    fn total_after(&self, conn: &mut impl Queryable, case: Case, expected: i64) -> Result<i64, Error> {
        let deadline = Instant::now() + REPLICATION_WAIT;
        loop {
            let total = self.total(conn, case)?;
            if total == expected || self.pools.len() == 1 || Instant::now() >= deadline {
                return Ok(total);
            }
            thread::sleep(Duration::from_millis(100));
        }
    }

    /// Runs `case`'s clients as threads, each on a connection of its own;
    /// returns when they started and how each fared.
    fn threads(
        &self,
        case: Case,
        budget: Budget,
        progress: &ProgressBar,
    ) -> Result<(Instant, Vec<ClientOutcome>, Option<ReconcileFigures>), Error> {
        let reconciler = match (case.variant.profile().reconciles, self.package(case.variant, case.slots)?) {
            (true, Some(package)) => {
                Some(Counters::builder(self.pool_of(0).clone()).package(&package).build()?)
            }
            _ => None,
        };
        let barrier = Barrier::new(case.clients as usize + 1);
        let clients_done = AtomicBool::new(false);
        let (started, outcomes, reconciles) = thread::scope(|scope| {
            let clients: Vec<_> = (0..case.clients)
                .map(|client| {
                    let barrier = &barrier;
                    scope.spawn(move || self.client(case, client, budget, barrier, progress))
                })
                .collect();
            let reconciles =
                reconciler.as_ref().map(|counters| scope.spawn(|| reconcile_until(counters, &clients_done)));
            barrier.wait();
            let started = Instant::now();
            let outcomes: Vec<Result<ClientOutcome, Error>> = clients
                .into_iter()
                .map(|client| client.join().expect("a benchmark client panicked"))
                .collect();
            clients_done.store(true, Ordering::Relaxed);
            let reconciles = reconciles.map(|reconciles| reconciles.join().expect("the reconciler panicked"));
            (started, outcomes, reconciles)
        });
        Ok((started, outcomes.into_iter().collect::<Result<Vec<_>, _>>()?, reconciles.transpose()?))
    }

    /// One client's loop: prepared statement, barrier, bounded iterations.
    fn client(
        &self,
        case: Case,
        client: u32,
        budget: Budget,
        barrier: &Barrier,
        progress: &ProgressBar,
    ) -> Result<ClientOutcome, Error> {
        let prepared = match case.variant {
            Variant::Coalesced | Variant::CoalescedIds => {
                Ok(Incrementer::Coalesced(self.coalescing_of(case.variant, client)))
            }
            Variant::Client => self.package(case.variant, case.slots).and_then(|package| {
                let package = package.expect("the client variant calls the dynamic package");
                Ok(Incrementer::Client(
                    Counters::builder(self.pool_of(client).clone()).package(&package).build()?,
                ))
            }),
            Variant::ClientIds => self.package(case.variant, case.slots).and_then(|package| {
                let package = package.expect("the client-ids variant calls the dynamic package");
                let builder = Counters::builder(self.pool_of(client).clone()).package(&package);
                Ok(Incrementer::Client(builder.write_ids().build()?))
            }),
            Variant::Plain => self.package(case.variant, case.slots).and_then(|package| {
                let package = package.expect("the plain variant counts in the dynamic package");
                let builder = Counters::builder(self.pool_of(client).clone()).package(&package);
                Ok(Incrementer::Client(builder.plain_sql().build()?))
            }),
            variant => self.increment_sql(case).and_then(|sql| {
                let mut conn = self.pool_of(client).get_conn().map_err(Error::Query)?;
                let statement = conn.prep(sql).map_err(Error::Query)?;
                Ok(match variant {
                    Variant::Transaction => Incrementer::Transaction(conn, statement),
                    Variant::SaleInTransactions => {
                        without_snapshot_isolation(&mut conn)?;
                        let order = conn.prep(ORDER_SQL).map_err(Error::Query)?;
                        Incrementer::Order(conn, statement, order)
                    }
                    Variant::Sourced | Variant::SourcedReconciling => {
                        let row = conn.prep(SOURCE_SQL).map_err(Error::Query)?;
                        Incrementer::Order(conn, statement, row)
                    }
                    Variant::AddMany => {
                        let deltas: serde_json::Map<String, serde_json::Value> = self
                            .counter_names(case, client)
                            .iter()
                            .map(|name| (name.clone(), 1.into()))
                            .collect();
                        let deltas = serde_json::Value::Object(deltas).to_string();
                        Incrementer::Batch(conn, statement, deltas)
                    }
                    _ => Incrementer::Statement(conn, statement),
                })
            }),
        };
        // Wait at the barrier even after a failure, or the others wait forever.
        barrier.wait();
        let mut incrementer = prepared?;
        let started = Instant::now();
        // A sale goes on until its stock runs out.
        let (iterations, deadline) = if case.variant.profile().sells {
            (u32::MAX, started + ROUND_TIME_LIMIT)
        } else {
            budget.limits(started)
        };
        let hold = Duration::from_millis(u64::from(case.hold_ms));
        let mut targets = self.targets(case, client);
        let mut think = Think::new(case.think_us);
        let mut outcome = ClientOutcome::default();
        for _ in 0..iterations {
            if Instant::now() >= deadline || outcome.refused > 0 {
                break;
            }
            incrementer.iteration(targets.next(), hold, &mut outcome, progress)?;
            if let Some(pause) = think.next() {
                thread::sleep(pause);
            }
        }
        outcome.finished = Instant::now();
        Ok(outcome)
    }
}

/// How a client increments its hot counters.
enum Incrementer<'a> {
    /// One statement per counter, alone with autocommit or in a
    /// transaction held open.
    Statement(PooledConn, Statement),
    /// One transaction per iteration, one statement per counter in it.
    Transaction(PooledConn, Statement),
    /// One transaction per counter: the statement, then the insert of the
    /// row it counts ([`ORDER_SQL`], [`SOURCE_SQL`]).
    Order(PooledConn, Statement, Statement),
    /// One statement per iteration for every counter, with this argument.
    Batch(PooledConn, Statement, String),
    /// One call per counter through the handle the node's clients share.
    Coalesced(&'a Coalescing),
    /// One call per counter through a client of its own, calling the
    /// routines or in plain SQL.
    Client(Counters),
}

impl Incrementer<'_> {
    /// Increments each of `names` once, and records how that went.
    fn iteration(
        &mut self,
        names: &[String],
        hold: Duration,
        outcome: &mut ClientOutcome,
        progress: &ProgressBar,
    ) -> Result<(), Error> {
        match self {
            Incrementer::Statement(conn, statement) => {
                for name in names {
                    let began = Instant::now();
                    let result = if hold.is_zero() {
                        conn.exec_drop(&*statement, (name,))
                    } else {
                        in_transaction(conn, |conn| {
                            conn.exec_drop(&*statement, (name,))?;
                            thread::sleep(hold);
                            Ok(())
                        })?
                    };
                    outcome.record(result.map_err(CounterError::from), 1, began, progress);
                }
            }
            Incrementer::Transaction(conn, statement) => {
                let began = Instant::now();
                let result = in_transaction(conn, |conn| {
                    names.iter().try_for_each(|name| conn.exec_drop(&*statement, (name,)))
                })?;
                outcome.record(result.map_err(CounterError::from), names.len(), began, progress);
            }
            Incrementer::Order(conn, take, order) => {
                for name in names {
                    let began = Instant::now();
                    let result = in_transaction(conn, |conn| {
                        conn.exec_drop(&*take, (name,))?;
                        conn.exec_drop(&*order, (name,))
                    })?;
                    outcome.record(result.map_err(CounterError::from), 1, began, progress);
                }
            }
            Incrementer::Batch(conn, statement, deltas) => {
                let began = Instant::now();
                let result = conn.exec_drop(&*statement, (deltas.as_str(),));
                outcome.record(result.map_err(CounterError::from), names.len(), began, progress);
            }
            Incrementer::Coalesced(coalescing) => {
                for name in names {
                    let began = Instant::now();
                    outcome.record(coalescing.increment(name), 1, began, progress);
                }
            }
            Incrementer::Client(counters) => {
                for name in names {
                    let began = Instant::now();
                    outcome.record(counters.increment(name), 1, began, progress);
                }
            }
        }
        Ok(())
    }
}

/// How often `sourced-reconciling` starts a reconcile: ten in a round of
/// 10 s, as a schedule would run them, not back to back, which would
/// measure the CPU a reconcile takes from the writers on a small machine
/// rather than whether it makes them wait.
const RECONCILE_EVERY: Duration = Duration::from_secs(1);

/// Reconciles `sourced-reconciling`'s counters against their rows, one run
/// every [`RECONCILE_EVERY`], the first at once, until `clients_done`.
fn reconcile_until(counters: &Counters, clients_done: &AtomicBool) -> Result<ReconcileFigures, Error> {
    let mut figures = ReconcileFigures::default();
    let mut next = Instant::now();
    while !clients_done.load(Ordering::Relaxed) {
        if Instant::now() < next {
            thread::sleep(Duration::from_millis(10));
            continue;
        }
        next += RECONCILE_EVERY;
        let drifts = counters.reconcile(Reconcile::query(RECONCILE_SQL)).map_err(Error::Counter)?;
        figures.runs += 1;
        figures.corrected +=
            drifts.iter().filter(|drift| drift.correction == Correction::Added).count() as u64;
    }
    Ok(figures)
}

/// Turns MariaDB's snapshot isolation off for `conn`'s session, where the
/// server has it (11.6 and later), as the reference asks of applications
/// that take from bounded counters inside their transactions: with it on,
/// a take cannot look at its slot before it locks it, and takes near the
/// bound deadlock.
fn without_snapshot_isolation(conn: &mut PooledConn) -> Result<(), Error> {
    let variable: Option<(String, String)> =
        conn.query_first("SHOW VARIABLES LIKE 'innodb_snapshot_isolation'").map_err(Error::Query)?;
    if variable.is_some() {
        conn.query_drop("SET SESSION innodb_snapshot_isolation = OFF").map_err(Error::Query)?;
    }
    Ok(())
}

/// Runs `work` between START TRANSACTION and COMMIT, and rolls back when it
/// fails. Fails only when that ROLLBACK fails; the work's own outcome is inside.
fn in_transaction(
    conn: &mut PooledConn,
    work: impl FnOnce(&mut PooledConn) -> Result<(), mysql::Error>,
) -> Result<Result<(), mysql::Error>, Error> {
    let result = conn
        .query_drop("START TRANSACTION")
        .and_then(|()| work(conn))
        .and_then(|()| conn.query_drop("COMMIT"));
    if result.is_err() {
        conn.query_drop("ROLLBACK").map_err(Error::Query)?;
    }
    Ok(result)
}
