//! The limits of batches and write ids, and the numbers refusals carry.

use slotted_counters_core::PackageOptions;
use slotted_counters_core::package::{self, errno};

/// Entries a batch's statement gathers before it appends them to its text.
const BATCH_PART: u32 = 64;

/// One write with an id in this many forgets expired ids, up to
/// [`FORGET_PER_WRITE`] of them: four per write on average, more than the
/// one each records, so the expired fall behind no faster than they come.
const FORGET_CHANCE: u32 = 16;
const FORGET_PER_WRITE: u32 = 64;

/// How large a batch may be.
pub(in crate::render) struct Batches {
    /// The most counters one batch names.
    pub(in crate::render) limit: u32,
    /// The most bytes a batch's text may have.
    pub(in crate::render) bytes: u64,
    /// How many entries a batch's statement gathers before it appends them
    /// to its text.
    pub(in crate::render) part: u32,
}

impl Batches {
    pub(super) fn new(options: &PackageOptions) -> Self {
        Batches {
            limit: package::BATCH_LIMIT,
            bytes: package::batch_bytes(options.name_length()),
            part: BATCH_PART,
        }
    }
}

/// How long write ids are kept, and how they are forgotten.
pub(in crate::render) struct WriteIds {
    /// Seconds a write id is kept.
    pub(in crate::render) window: u32,
    /// How writes with ids forget older ones as they go: one call in
    /// `forget_chance`, up to `forget_per_write` ids each.
    pub(in crate::render) forget_chance: u32,
    pub(in crate::render) forget_per_write: u32,
    /// How many `forget_writes` deletes at a time.
    pub(in crate::render) forget_batch: u32,
    /// The longest window `forget_writes` takes, in seconds.
    pub(in crate::render) forget_limit: u64,
}

impl WriteIds {
    pub(super) fn new(options: &PackageOptions) -> Self {
        WriteIds {
            window: options.write_id_window(),
            forget_chance: FORGET_CHANCE,
            forget_per_write: FORGET_PER_WRITE,
            forget_batch: package::FORGET_BATCH,
            forget_limit: package::FORGET_LIMIT.as_secs(),
        }
    }
}

/// The package's error numbers, the SQLSTATE every refusal is signalled
/// with, and the most characters of a refusal's message.
pub(in crate::render) struct Errors {
    pub(in crate::render) unknown_counter: u16,
    pub(in crate::render) already_exists: u16,
    pub(in crate::render) invalid_argument: u16,
    pub(in crate::render) past_bound: u16,
    pub(in crate::render) install_refused: u16,
    pub(in crate::render) sqlstate: &'static str,
    pub(in crate::render) message_length: u32,
}

impl Errors {
    pub(super) fn new() -> Self {
        Errors {
            unknown_counter: errno::UNKNOWN_COUNTER,
            already_exists: errno::ALREADY_EXISTS,
            invalid_argument: errno::INVALID_ARGUMENT,
            past_bound: errno::PAST_BOUND,
            install_refused: errno::INSTALL_REFUSED,
            sqlstate: package::REFUSAL_SQLSTATE,
            message_length: package::MESSAGE_LENGTH,
        }
    }
}
