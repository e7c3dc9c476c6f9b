//! The counters the plain mode last saw tracking a period: their writes go
//! straight to the read of their periods, skipping the one statement that
//! writes a counter tracking none, which a tracked counter always misses.

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};

use super::slot_counts::SLOT_COUNTS_KEPT;

/// Names as the caller wrote them. A hint only: a name wrongly here costs
/// its writes the read of the periods, and one wrongly missing costs one
/// statement that changes no row; either way the write counts where it
/// should.
#[derive(Debug, Default)]
pub(super) struct Tracking(Mutex<HashSet<String>>);

impl Tracking {
    pub(super) fn tracks(&self, name: &str) -> bool {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).contains(name)
    }

    /// Keeps what a read of counter `name`'s periods found.
    pub(super) fn note(&self, name: &str, tracks: bool) {
        let mut names = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if !tracks {
            names.remove(name);
            return;
        }
        if names.len() >= SLOT_COUNTS_KEPT && !names.contains(name) {
            names.clear();
        }
        names.insert(name.to_owned());
    }
}
