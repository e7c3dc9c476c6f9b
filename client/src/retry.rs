//! When a failed call runs again, and after how long: decided here once
//! for both clients.
//!
//! A call the server rolled back for a reason that may be gone at once
//! ([`CounterError::is_retryable`]) runs again after a jittered exponential
//! backoff, within the client's [`RetryBudget`]. A call that met a
//! re-install ([`CounterError::is_reinstall_gap`]: on MySQL, which drops
//! each routine and trigger just before creating it again, a routine
//! missing or not granted again yet, or a trigger missing) changed nothing:
//! it runs again for up to [`REINSTALL_WINDOW`] from the first time it met
//! one, inside the caller's transaction too.

use std::time::{Duration, Instant};

use crate::error::CounterError;

/// The first backoff; each retry doubles it, up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(5);
const MAX_BACKOFF: Duration = Duration::from_millis(500);

/// How long a call waits for a missing routine to come back, from the
/// first time it finds one missing: a call that was slow before (queued
/// behind the `DROP`'s metadata lock on a busy server) gets the whole
/// window. A reinstall replaces each routine within milliseconds; a package
/// that is not installed at all fails after this.
pub const REINSTALL_WINDOW: Duration = Duration::from_secs(2);

/// The longest pause between two tries of a missing routine.
const MAX_REINSTALL_PAUSE: Duration = Duration::from_millis(100);

/// How long a call the server rolled back (a deadlock, a lock wait
/// timeout, a lost certification) is tried again: a number of tries, or a
/// time. A client's own calls take it from its builder; calls on a
/// caller's connection are never tried again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryBudget {
    /// This many tries in all (1 never tries again; 0 counts as 1).
    Attempts(u32),
    /// As many tries as fit in this time since the first: on a
    /// multi-primary cluster (Galera), a write that loses certification to
    /// another node's comes back as a deadlock, and a routine that touches
    /// every slot of a counter under load may need hundreds of tries; a
    /// time bounds the wait however busy the cluster is.
    Time(Duration),
}

impl Default for RetryBudget {
    /// Five tries in all.
    fn default() -> Self {
        RetryBudget::Attempts(5)
    }
}

/// Why a failed call runs again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Retry {
    /// A routine, its grant or a trigger was missing, as during a reinstall.
    Reinstall,
    /// The server rolled the call back.
    Rollback,
    /// The answer was lost, and the call carries a write id.
    LostAnswer,
}

/// One call's tries so far.
#[derive(Debug)]
pub(crate) struct Tries {
    budget: RetryBudget,
    started: Instant,
    /// When the call first found a routine missing.
    missing_since: Option<Instant>,
    attempt: u32,
    backoff: Duration,
    reinstall_pause: Duration,
}

impl Tries {
    pub(crate) fn new(budget: RetryBudget) -> Self {
        Tries {
            budget,
            started: Instant::now(),
            missing_since: None,
            attempt: 1,
            backoff: FIRST_BACKOFF,
            reinstall_pause: FIRST_BACKOFF,
        }
    }

    /// How long to wait before the call runs again after `error`, and why
    /// it does; `None` when it fails with it. A call that `carries_id` also
    /// runs again after a lost answer, an interruption, or a connection that
    /// could not be opened: the server counts its write once.
    pub(crate) fn pause_after(
        &mut self,
        error: &CounterError,
        carries_id: bool,
    ) -> Option<(Duration, Retry)> {
        if error.is_reinstall_gap() {
            let missing_since = *self.missing_since.get_or_insert_with(Instant::now);
            if missing_since.elapsed() >= REINSTALL_WINDOW {
                return None;
            }
            let pause = self.reinstall_pause;
            self.reinstall_pause = (pause * 2).min(MAX_REINSTALL_PAUSE);
            return Some((pause, Retry::Reinstall));
        }
        let lost = matches!(error, CounterError::Connection { .. } | CounterError::Connect { .. })
            || error.is_interrupted();
        let why = if error.is_retryable() {
            Some(Retry::Rollback)
        } else if carries_id && lost {
            Some(Retry::LostAnswer)
        } else {
            None
        }?;
        if !self.budget_allows_another() {
            return None;
        }
        let pause = jittered(self.backoff);
        self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
        self.attempt += 1;
        Some((pause, why))
    }

    /// Whether the call has found a routine missing before.
    pub(crate) fn met_missing(&self) -> bool {
        self.missing_since.is_some()
    }

    /// How many tries the call has had, reinstall waits aside.
    pub(crate) fn attempts(&self) -> u32 {
        self.attempt
    }

    fn budget_allows_another(&self) -> bool {
        match self.budget {
            RetryBudget::Attempts(attempts) => self.attempt < attempts,
            RetryBudget::Time(time) => self.started.elapsed() < time,
        }
    }
}

/// A uniformly random pause between half of `backoff` and all of it, so
/// clients that collided do not collide again in step. Without the
/// operating system's randomness, the whole `backoff`.
fn jittered(backoff: Duration) -> Duration {
    let draw = getrandom::u32().unwrap_or(u32::MAX);
    backoff.mul_f64(0.5 + 0.5 * f64::from(draw) / f64::from(u32::MAX))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn deadlock() -> CounterError {
        CounterError::from_server(
            1213,
            "40001".to_owned(),
            "Deadlock found".to_owned(),
            std::io::Error::other("deadlock"),
        )
    }

    #[test]
    fn jitter_stays_within_half_and_all_of_the_backoff() {
        for _ in 0..1000 {
            let pause = jittered(Duration::from_millis(100));
            assert!((Duration::from_millis(50)..=Duration::from_millis(100)).contains(&pause), "{pause:?}");
        }
    }

    #[test]
    fn rollbacks_back_off_exponentially_within_the_attempts() {
        let mut tries = Tries::new(RetryBudget::Attempts(4));
        let pauses: Vec<Duration> =
            (0..4).map_while(|_| tries.pause_after(&deadlock(), false).map(|(pause, _)| pause)).collect();
        assert_eq!(pauses.len(), 3, "four tries in all: {pauses:?}");
        for (pause, backoff) in pauses.iter().zip([5, 10, 20]) {
            let backoff = Duration::from_millis(backoff);
            assert!((backoff / 2..=backoff).contains(pause), "{pause:?} for a backoff of {backoff:?}");
        }
    }

    #[test]
    fn a_single_attempt_never_retries_but_rides_through_a_reinstall() {
        let mut tries = Tries::new(RetryBudget::Attempts(1));
        assert_eq!(tries.pause_after(&deadlock(), false), None);
        let missing = CounterError::NotInstalled("PROCEDURE app.counter_add does not exist".to_owned());
        assert_eq!(tries.pause_after(&missing, false), Some((FIRST_BACKOFF, Retry::Reinstall)));
        assert_eq!(tries.pause_after(&missing, false), Some((FIRST_BACKOFF * 2, Retry::Reinstall)));
    }

    #[test]
    fn the_reinstall_window_counts_from_the_first_missing_routine_not_the_calls_start() {
        let missing = CounterError::NotInstalled("PROCEDURE app.counter_add does not exist".to_owned());
        let mut slow = Tries::new(RetryBudget::Attempts(1));
        slow.started -= REINSTALL_WINDOW * 2;
        assert_eq!(
            slow.pause_after(&missing, false),
            Some((FIRST_BACKOFF, Retry::Reinstall)),
            "a call queued for longer than the window before its routine went missing"
        );

        let mut waited = Tries::new(RetryBudget::Time(Duration::from_secs(60)));
        assert!(waited.pause_after(&missing, false).is_some());
        waited.missing_since = waited.missing_since.map(|since| since - REINSTALL_WINDOW);
        assert_eq!(waited.pause_after(&missing, false), None, "a routine missing for the whole window");
    }

    #[test]
    fn errors_that_a_second_try_would_meet_again_fail_at_once() {
        let mut tries = Tries::new(RetryBudget::Time(Duration::from_secs(60)));
        for error in [
            CounterError::not_found("unknown counter: 'a'".to_owned()),
            CounterError::connection("broken pipe", std::io::Error::other("broken pipe")),
            CounterError::PoolTimedOut {
                message: "pool timed out".to_owned(),
                source: Arc::new(std::io::Error::other("pool timed out")),
            },
        ] {
            assert_eq!(tries.pause_after(&error, false), None, "{error:?}");
        }
    }
}
