//! The sync client's call of bounded counters.

use std::ops::RangeBounds;

use super::{Counters, SyncConnections};
use crate::driver::ready;
use crate::error::CounterError;

impl<C: SyncConnections> Counters<C> {
    /// Bounds counter `name`'s total to `bounds`, inclusive: from then on a
    /// write that would take it past a bound is refused with
    /// [`CounterError::PastBound`], which says how much room was left, and
    /// changes nothing; concurrent writes never take it past, and none is
    /// refused while the room is there. `..` takes the bounds away.
    /// Refused when the total is outside `bounds` already.
    ///
    /// A write its slot can take alone still changes that one slot; the
    /// counter's total is spread over its slots, each with an even share of
    /// the room, and spread again when a write's slot runs short.
    ///
    /// ```no_run
    /// use slotted_counters::{CounterError, NewCounter};
    /// # let counters = slotted_counters::Counters::new(mysql::Pool::new("mysql://a@h/db")?)?;
    /// counters.setup("sku-42", NewCounter::new("stock of sku 42").slots(64).initial_value(1_000))?;
    /// counters.bound("sku-42", 0..)?;                  // never oversold
    /// match counters.add("sku-42", -1) {
    ///     Ok(()) => println!("sold"),
    ///     Err(CounterError::PastBound { room, .. }) => println!("sold out ({room} left)"),
    ///     Err(error) => return Err(error.into()),
    /// }
    /// counters.bound("api-calls", ..=10_000)?;         // a quota
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn bound(&self, name: &str, bounds: impl RangeBounds<i64>) -> Result<(), CounterError> {
        ready(self.engine.bound(name, bounds))
    }
}
