//! The engine: the counter calls, written once for both clients. Each
//! checks its arguments, describes itself as a [`Call`], and is run by
//! [`Engine::run`], which owns the retries, the backoff and the reinstall
//! ride-through, one try at a time through a [`Driver`]. The sync and the
//! async client are thin layers that run these futures their own way.

use std::sync::Arc;
use std::time::Duration;

use slotted_counters_core::names::NameRule;
use slotted_counters_core::package::{self, Routine};
use slotted_counters_core::{ConfigError, PackageOptions};

use crate::call::{Answer, Call, Deltas, NewCounter, StartDate, add_delta, new_write_id};
use crate::call::{Drift, Reconcile};
use crate::driver::{Connection, Owner};
use crate::error::CounterError;
use crate::flushing::FlushSettings;
use crate::mode::Mode;
use crate::plain::Plain;
use crate::reconcile::{self, ReconcileCall};
use crate::retry::{Retry, RetryBudget, Tries};

/// What a client knows of its package: the statements its calls send and
/// the rule its names follow. Shared by a client's clones and the clients
/// it makes for a caller's connection.
#[derive(Debug)]
struct Package {
    mode: Mode,
    names: NameRule,
    /// The slot table, which a reconcile's set reads its members from.
    table: String,
    /// The name of the view of totals, which keys the lock of reconciles.
    totals_view: String,
}

/// Where a client runs its calls: connections from a pool, or the caller's
/// own. Public because the clients' connection traits extend it, with
/// nothing but opaque types in its methods: only this crate makes an
/// [`Attempt`] or reads an [`Outcome`], so no other driver can do anything.
#[allow(async_fn_in_trait)]
pub trait Driver: sealed::Sealed {
    /// Runs `attempt` on a connection of this driver's, and takes the
    /// connection back.
    async fn attempt(&self, attempt: Attempt<'_>) -> Result<Outcome, CounterError>;

    /// Waits `time` before the next try.
    async fn pause(&self, time: Duration);
}

/// What only this crate's drivers are: no other crate can name it, so no
/// other crate can implement [`Driver`], nor the connection traits that
/// extend it.
pub(crate) mod sealed {
    #[expect(unnameable_types, reason = "the seal: no other crate may name it")]
    pub trait Sealed {}
}

/// One try of a call, as the client's mode makes it.
#[derive(Debug, Clone, Copy)]
pub struct Attempt<'a> {
    mode: &'a Mode,
    work: Work<'a>,
}

impl Attempt<'_> {
    /// Runs the try on `conn`, which `owner`'s transaction may hold.
    pub(crate) async fn run(self, conn: &mut impl Connection, owner: Owner) -> Result<Outcome, CounterError> {
        match self.work {
            Work::Call(call) => self.mode.run(conn, call, owner).await.map(Outcome),
            Work::Reconcile(reconcile) => {
                reconcile::run(self.mode, conn, reconcile).await.map(|drifts| Outcome(Answer::Drifts(drifts)))
            }
        }
    }
}

/// What a try runs: one call, or a reconcile, which makes several calls on
/// one connection around a snapshot of its own.
#[derive(Debug, Clone, Copy)]
enum Work<'a> {
    Call(Call<'a>),
    Reconcile(ReconcileCall<'a>),
}

impl<'a> From<Call<'a>> for Work<'a> {
    fn from(call: Call<'a>) -> Self {
        Work::Call(call)
    }
}

impl Work<'_> {
    /// Its name, as its events show it.
    fn kind(&self) -> &'static str {
        match self {
            Work::Call(call) => call.kind(),
            Work::Reconcile(_) => "reconcile",
        }
    }

    /// The routine whose features it needs: a reconcile's corrections
    /// carry write ids.
    fn routine(&self) -> Routine {
        match self {
            Work::Call(call) => call.routine(),
            Work::Reconcile(_) => Routine::AddOnce,
        }
    }

    /// Whether running it again after a lost answer cannot count twice: a
    /// reconcile reads again in a new snapshot, and corrects under the
    /// same ids.
    fn carries_id(&self) -> bool {
        match self {
            Work::Call(call) => call.carries_id(),
            Work::Reconcile(_) => true,
        }
    }
}

/// What a try of a call answered.
#[derive(Debug)]
pub struct Outcome(Answer);

/// The calls, run through driver `D`.
#[derive(Debug, Clone)]
pub(crate) struct Engine<D> {
    driver: D,
    budget: RetryBudget,
    /// Whether increments and batches carry a write id, so that a lost
    /// answer is retried and counted once.
    write_ids: bool,
    /// How the client's coalescing handles flush.
    flushes: FlushSettings,
    package: Arc<Package>,
}

impl<D> Engine<D> {
    /// Calls the routines of a package generated with `options`, through `driver`.
    pub(crate) fn new(driver: D, options: &PackageOptions) -> Self {
        Self::in_mode(driver, options, Mode::routines(options))
    }

    /// Calls the routines of a package generated with `options` and
    /// nothing else, a flush's sum included: for tests of the handles'
    /// logic, whose scripts answer one `CALL` a flush.
    #[cfg(test)]
    pub(crate) fn routines_only(driver: D, options: &PackageOptions) -> Self {
        let routines = crate::routines::Routines::new(options);
        Self::in_mode(driver, options, Mode::Routines { routines, direct: None })
    }

    /// Makes the calls of a package generated with `options` in plain SQL,
    /// through `driver`; refused for a package only its routines serve.
    pub(crate) fn plain(driver: D, options: &PackageOptions) -> Result<Self, ConfigError> {
        Ok(Self::in_mode(driver, options, Mode::Plain(Plain::new(options)?)))
    }

    fn in_mode(driver: D, options: &PackageOptions, mode: Mode) -> Self {
        Engine {
            driver,
            budget: RetryBudget::default(),
            write_ids: false,
            flushes: FlushSettings::default(),
            package: Arc::new(Package {
                mode,
                names: NameRule::new(options),
                table: options.table().to_owned(),
                totals_view: package::totals_view(options),
            }),
        }
    }

    /// The same calls through `driver`, never retried: a connection of the
    /// caller's, whose transaction a rollback ends.
    pub(crate) fn on<E>(&self, driver: E) -> Engine<E> {
        Engine {
            driver,
            budget: RetryBudget::Attempts(1),
            write_ids: self.write_ids,
            flushes: self.flushes,
            package: Arc::clone(&self.package),
        }
    }

    /// Makes increments and batches carry write ids.
    pub(crate) fn with_write_ids(mut self) -> Self {
        self.write_ids = true;
        self
    }

    /// Tries a call again within `budget` while the server rolls it back.
    pub(crate) fn with_retry(mut self, budget: RetryBudget) -> Self {
        self.budget = budget;
        self
    }

    /// Makes the client's coalescing handles flush as `flushes` says.
    pub(crate) fn with_flushes(mut self, flushes: FlushSettings) -> Self {
        self.flushes = flushes;
        self
    }

    /// How the client's coalescing handles flush.
    pub(crate) fn flushes(&self) -> FlushSettings {
        self.flushes
    }

    /// The driver, for tests to read what it saw.
    #[cfg(test)]
    pub(crate) fn driver(&self) -> &D {
        &self.driver
    }

    /// The driver, to change where the calls run: a coalescing handle
    /// keeps connections of its own.
    #[cfg(feature = "sqlx")]
    pub(crate) fn driver_mut(&mut self) -> &mut D {
        &mut self.driver
    }

    /// Refuses a name no counter may have, as the routines would.
    pub(crate) fn check(&self, name: &str) -> Result<(), CounterError> {
        self.package.names.check(name).map_err(|refusal| CounterError::invalid_argument(refusal).about(name))
    }
}

/// Tells the application's logger why a call runs again: at debug for a rollback, which
/// contention brings by the thousand; at info for a reinstall ridden
/// through; at warn for a lost answer, sent again under its write id.
fn report_retry(work: Work<'_>, error: &CounterError, pause: Duration, why: Retry) {
    let call = work.kind();
    match why {
        Retry::Reinstall => log::info!(
            call, pause:?, error:%;
            "a routine is missing, as during a reinstall ({error}): the call {call} runs again after {pause:?}"
        ),
        Retry::Rollback => {
            let code = error.code();
            log::debug!(
                call, code, pause:?;
                "the server rolled the call {call} back ({error}): it runs again after {pause:?}"
            );
        }
        Retry::LostAnswer => log::warn!(
            call, pause:?, error:%;
            "the call's answer was lost ({error}): it runs again under its write id after {pause:?}"
        ),
    }
}

impl<D: Driver> Engine<D> {
    /// Runs `work`, again while [`Tries`] says it may.
    async fn run<'w>(&self, work: impl Into<Work<'w>>) -> Result<Answer, CounterError> {
        let work = work.into();
        let mut tries = Tries::new(self.budget);
        loop {
            let attempt = Attempt { mode: &self.package.mode, work };
            let outcome = self.driver.attempt(attempt).await;
            // A routine's first miss: a feature the package lacks fails the
            // call at once; any other miss is a re-install's, waited for.
            if matches!(outcome, Err(CounterError::NotInstalled(_)))
                && !tries.met_missing()
                && let Some(lacked) = self.lacked_feature(work).await
            {
                return Err(lacked);
            }
            match outcome {
                Err(error) => match tries.pause_after(&error, work.carries_id()) {
                    Some((pause, why)) => {
                        report_retry(work, &error, pause, why);
                        self.driver.pause(pause).await
                    }
                    None => {
                        if tries.attempts() > 1 {
                            let (call, attempts) = (work.kind(), tries.attempts());
                            log::warn!(
                                call, attempts, error:%;
                                "the call {call} failed after its retries, {attempts} tries: {error}"
                            );
                        }
                        return Err(error);
                    }
                },
                Ok(Outcome(answer)) => return Ok(answer),
            }
        }
    }

    /// The error a call whose routine is missing fails with at once: the
    /// database's package lacks a feature the call needs, as
    /// `counter_package()` says. `None` when it has them all (a re-install
    /// is replacing the routine) or cannot say (the package predates the
    /// function, or the function is being replaced too).
    async fn lacked_feature(&self, work: Work<'_>) -> Option<CounterError> {
        let attempt = Attempt { mode: &self.package.mode, work: Work::Call(Call::Package) };
        let Ok(Outcome(Answer::Package(Some(line)))) = self.driver.attempt(attempt).await else {
            return None;
        };
        let installed = package::features_in_line(&line)?;
        let feature = work.routine().needs().missing_from(installed).iter().next()?;
        Some(CounterError::FeatureMissing {
            feature: feature.name(),
            call: work.kind(),
            with_it: installed.with(feature).to_string(),
            package: line,
        })
    }

    async fn write(&self, call: Call<'_>) -> Result<(), CounterError> {
        self.run(call).await.map(drop)
    }

    pub(crate) async fn setup(&self, name: &str, counter: NewCounter<'_>) -> Result<(), CounterError> {
        self.check(name)?;
        self.write(Call::Setup { name, counter }).await
    }

    /// `setup`, unless a counter has the name: the routine refuses that
    /// (9002) before it writes anything, so a caller's transaction goes on.
    pub(crate) async fn setup_if_missing(
        &self,
        name: &str,
        counter: NewCounter<'_>,
    ) -> Result<(), CounterError> {
        match self.setup(name, counter).await {
            Err(CounterError::AlreadyExists { .. }) => Ok(()),
            done => done,
        }
    }

    pub(crate) async fn increment(&self, name: &str) -> Result<(), CounterError> {
        self.check(name)?;
        self.once_or(name, 1, Call::Increment { name }).await
    }

    pub(crate) async fn add(&self, name: &str, delta: i64) -> Result<(), CounterError> {
        self.check(name)?;
        self.once_or(name, delta, Call::Add { name, delta }).await
    }

    /// With write ids, `delta` to counter `name` as one `counter_add_once`
    /// under a fresh id, kept through the retries; without, `call`.
    async fn once_or(&self, name: &str, delta: i64, call: Call<'_>) -> Result<(), CounterError> {
        if self.write_ids {
            let id = new_write_id();
            return self.write(Call::AddOnce { id: &id, name, delta }).await;
        }
        self.write(call).await
    }

    /// Sums the deltas per name and applies them in one call; no call for
    /// no deltas.
    pub(crate) async fn add_many<S: AsRef<str>>(
        &self,
        deltas: impl IntoIterator<Item = (S, i64)>,
    ) -> Result<(), CounterError> {
        let mut sums = Deltas::new();
        for (name, delta) in deltas {
            self.check(name.as_ref())?;
            add_delta(&mut sums, name.as_ref(), delta)?;
        }
        if sums.is_empty() {
            return Ok(());
        }
        if self.write_ids {
            let id = new_write_id();
            return self.write(Call::AddManyOnce { id: &id, deltas: &sums }).await;
        }
        self.write(Call::AddMany { deltas: &sums }).await
    }

    pub(crate) async fn reset(
        &self,
        name: &str,
        value: i64,
        start_date: StartDate,
    ) -> Result<(), CounterError> {
        self.check(name)?;
        self.write(Call::Reset { name, value, start_date }).await
    }

    pub(crate) async fn delete(&self, name: &str) -> Result<(), CounterError> {
        self.check(name)?;
        self.write(Call::Delete { name }).await
    }

    /// Forgets the write ids older than `window`, which must be a whole
    /// number of seconds from 1.
    pub(crate) async fn forget_writes(&self, window: std::time::Duration) -> Result<(), CounterError> {
        let seconds = i64::try_from(window.as_secs()).unwrap_or(i64::MAX);
        if seconds < 1 || window.subsec_nanos() != 0 {
            return Err(CounterError::invalid_argument(format!(
                "the window of write ids must be a whole number of seconds from 1, not {window:?}"
            )));
        }
        self.write(Call::ForgetWrites { seconds }).await
    }

    pub(crate) async fn get(&self, name: &str) -> Result<Option<i64>, CounterError> {
        Ok(self.get_many([name]).await?.pop().flatten())
    }

    /// Reconciles counters with their source of truth (see
    /// [`crate::Reconcile`]): every counter's drift, and what was done.
    pub(crate) async fn reconcile(&self, reconcile: Reconcile<'_>) -> Result<Vec<Drift>, CounterError> {
        let id = new_write_id();
        let package = &self.package;
        let call =
            ReconcileCall { reconcile, table: &package.table, totals_view: &package.totals_view, id: &id };
        match self.run(Work::Reconcile(call)).await? {
            Answer::Drifts(drifts) => Ok(drifts),
            other => Err(CounterError::unexpected_answer(format!("{other:?} for a reconcile"), None)),
        }
    }

    /// The values of `names`, in their order, read in one round trip.
    pub(crate) async fn get_many<S: AsRef<str>>(
        &self,
        names: impl IntoIterator<Item = S>,
    ) -> Result<Vec<Option<i64>>, CounterError> {
        let names: Vec<String> = names.into_iter().map(|name| name.as_ref().to_owned()).collect();
        if names.is_empty() {
            return Ok(Vec::new());
        }
        self.run(Call::GetMany { names: &names }).await?.values()
    }
}

mod bounds;
mod periods;
#[cfg(test)]
mod tests;
