//! How a client's coalescing handles flush: how many flushes may be in
//! flight at once and how many counters one carries, as the client's
//! builder fixes them, and their defaults.

/// Flushes in flight at once at most, by default. One flush at a time
/// carries the most deltas per commit, so another starts only when the one
/// in flight has stalled: two let a stalled flush (a lock
/// wait, a retry, a lost connection) hold nobody else up.
pub const DEFAULT_FLUSHES: usize = 2;

/// Counters per flush, by default: a bound on one flush's work, so one
/// caller's wait stays short however many counters are hot.
pub const DEFAULT_COUNTERS_PER_FLUSH: usize = 256;

/// How a client's coalescing handles flush, as its builder set it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FlushSettings {
    /// Flushes in flight at once at most, at least 1.
    pub(crate) max_flushes: usize,
    /// Counters one flush carries at most, 1 to [`BATCH_LIMIT`](slotted_counters_core::package::BATCH_LIMIT).
    pub(crate) max_counters: usize,
}

impl Default for FlushSettings {
    fn default() -> Self {
        FlushSettings { max_flushes: DEFAULT_FLUSHES, max_counters: DEFAULT_COUNTERS_PER_FLUSH }
    }
}
