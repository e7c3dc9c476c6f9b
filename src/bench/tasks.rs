//! Rounds whose clients are tokio tasks: the async client and its
//! coalescing handle, called as a tokio application calls them. The tasks
//! run on a multi-threaded runtime with a worker per core, and start
//! together at a barrier, as the threads of the other rounds do.

use std::str::FromStr;
use std::sync::Arc;
use std::time::Instant;

use indicatif::ProgressBar;
use slotted_counters::sqlx::mysql::{MySqlConnectOptions, MySqlPoolOptions};
use slotted_counters::{AsyncCoalescing, AsyncCounters, FlushStats, PackageOptions};
use tokio::runtime::Runtime;
use tokio::sync::Barrier;

use super::plan::{Budget, Case, Think};
use super::population::Targets;
use super::report::ClientOutcome;
use super::variant::Variant;
use crate::error::Error;

/// The runtime of the async rounds, and per node the handles their tasks
/// share: a client over a pool of a connection per task, and a coalescing
/// handle over a pool of `flushes` connections.
pub(super) struct Tasks {
    runtime: Runtime,
    counters: Vec<AsyncCounters>,
    coalescing: Vec<AsyncCoalescing>,
}

impl Tasks {
    /// A runtime and, per node of `urls`, the handles of the async rounds:
    /// `clients` connections at most for `client-async`, `flushes` for
    /// `coalesced-async`, each opened when first used. `client` calls the
    /// routines of `client_package`, `coalesced` those of `coalesced_package`.
    pub(super) fn connect(
        urls: &[String],
        clients: u32,
        flushes: u32,
        client_package: &PackageOptions,
        coalesced_package: &PackageOptions,
    ) -> Result<Self, Error> {
        let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|error| {
            Error::Environment(format!("cannot start the async rounds' runtime: {error}"))
        })?;
        // sqlx's pools start their upkeep on the runtime they are made in.
        let _inside = runtime.enter();
        let (mut counters, mut coalescing) = (Vec::new(), Vec::new());
        for url in urls {
            let options =
                MySqlConnectOptions::from_str(url).map_err(|error| Error::Url(error.to_string()))?;
            let pool = |connections: u32| {
                MySqlPoolOptions::new().max_connections(connections).connect_lazy_with(options.clone())
            };
            counters.push(AsyncCounters::builder(pool(clients)).package(client_package).build()?);
            let coalesced = AsyncCounters::builder(pool(flushes)).package(coalesced_package);
            coalescing.push(coalesced.max_flushes(flushes as usize).build()?.coalescing());
        }
        Ok(Tasks { runtime, counters, coalescing })
    }

    /// What each node's coalescing handle has flushed so far.
    pub(super) fn flush_stats(&self) -> impl Iterator<Item = FlushStats> + '_ {
        self.coalescing.iter().map(AsyncCoalescing::stats)
    }

    /// Runs `case`'s clients as tasks, client `n` incrementing `targets(n)`
    /// on node `n % nodes`; returns when they started and how each fared.
    pub(super) fn round(
        &self,
        case: Case,
        budget: Budget,
        targets: impl Fn(u32) -> Targets,
        progress: &ProgressBar,
    ) -> (Instant, Vec<ClientOutcome>) {
        self.runtime.block_on(async {
            let barrier = Arc::new(Barrier::new(case.clients as usize + 1));
            let clients: Vec<_> = (0..case.clients)
                .map(|client| {
                    let node = client as usize % self.counters.len();
                    let incrementer = match case.variant {
                        Variant::CoalescedAsync => Incrementer::Coalesced(self.coalescing[node].clone()),
                        _ => Incrementer::Client(self.counters[node].clone()),
                    };
                    tokio::spawn(run_client(
                        incrementer,
                        targets(client),
                        budget,
                        Think::new(case.think_us),
                        Arc::clone(&barrier),
                        progress.clone(),
                    ))
                })
                .collect();
            barrier.wait().await;
            let started = Instant::now();
            let mut outcomes = Vec::with_capacity(clients.len());
            for client in clients {
                outcomes.push(client.await.expect("a benchmark task panicked"));
            }
            (started, outcomes)
        })
    }
}

/// How a task increments its hot counters.
enum Incrementer {
    Client(AsyncCounters),
    Coalesced(AsyncCoalescing),
}

/// One task's loop: barrier, then bounded iterations of an increment of
/// each of its targets, each followed by the task's pause. Tokio's timer
/// counts in milliseconds: a pause of less rounds up to one.
async fn run_client(
    incrementer: Incrementer,
    mut targets: Targets,
    budget: Budget,
    mut think: Think,
    barrier: Arc<Barrier>,
    progress: ProgressBar,
) -> ClientOutcome {
    barrier.wait().await;
    let started = Instant::now();
    let (iterations, deadline) = budget.limits(started);
    let mut outcome = ClientOutcome::default();
    for _ in 0..iterations {
        if Instant::now() >= deadline {
            break;
        }
        for name in targets.next() {
            let began = Instant::now();
            let result = match &incrementer {
                Incrementer::Client(counters) => counters.increment(name).await,
                Incrementer::Coalesced(coalescing) => coalescing.increment(name).await,
            };
            outcome.record(result, 1, began, &progress);
        }
        if let Some(pause) = think.next() {
            tokio::time::sleep(pause).await;
        }
    }
    outcome.finished = Instant::now();
    outcome
}
