//! The slot counts the plain mode has read, kept for
//! [`SLOT_COUNT_LIFETIME`] so that an increment costs one statement.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use slotted_counters_core::plain::SLOT_COUNT_LIFETIME;

/// The most slot counts kept; past it, all are forgotten and read again.
pub(super) const SLOT_COUNTS_KEPT: usize = 10_000;

/// Slot counts read, by name as the caller wrote it, with when.
#[derive(Debug, Default)]
pub(super) struct SlotCounts(Mutex<HashMap<String, (u32, Instant)>>);

impl SlotCounts {
    pub(super) fn get(&self, name: &str) -> Option<u32> {
        let counts = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        counts.get(name).filter(|(_, read)| read.elapsed() < SLOT_COUNT_LIFETIME).map(|(slots, _)| *slots)
    }

    pub(super) fn keep(&self, name: &str, slots: u32) {
        let mut counts = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if counts.len() >= SLOT_COUNTS_KEPT {
            counts.clear();
        }
        counts.insert(name.to_owned(), (slots, Instant::now()));
    }

    pub(super) fn forget(&self, name: &str) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).remove(name);
    }
}
