//! The call of bounded counters, checked and run as the engine runs every
//! call: a Rust range says the bounds.

use std::ops::{Bound as Limit, RangeBounds};

use slotted_counters_core::refusals::FOR_COUNTER;

use super::{Driver, Engine};
use crate::call::Call;
use crate::error::CounterError;

impl<D: Driver> Engine<D> {
    /// Bounds counter `name`'s total to `bounds`, inclusive; an unbounded
    /// side has no bound, and `..` takes the counter's bounds away.
    pub(crate) async fn bound(&self, name: &str, bounds: impl RangeBounds<i64>) -> Result<(), CounterError> {
        self.check(name)?;
        let (floor, ceiling) = limits(name, &bounds)?;
        self.write(Call::Bound { name, floor, ceiling }).await
    }
}

/// The floor and the ceiling of counter `name` that `bounds` says: the
/// least and the most its total may be.
fn limits(name: &str, bounds: &impl RangeBounds<i64>) -> Result<(Option<i64>, Option<i64>), CounterError> {
    let empty = || CounterError::invalid_about(&format!("the bounds hold no value{FOR_COUNTER}"), name);
    let floor = match bounds.start_bound() {
        Limit::Included(&floor) => Some(floor),
        Limit::Excluded(&below) => Some(below.checked_add(1).ok_or_else(empty)?),
        Limit::Unbounded => None,
    };
    let ceiling = match bounds.end_bound() {
        Limit::Included(&ceiling) => Some(ceiling),
        Limit::Excluded(&above) => Some(above.checked_sub(1).ok_or_else(empty)?),
        Limit::Unbounded => None,
    };
    Ok((floor, ceiling))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_gives_an_inclusive_floor_and_ceiling() {
        assert_eq!(limits("n", &(0..)).unwrap(), (Some(0), None));
        assert_eq!(limits("n", &(..=1_000)).unwrap(), (None, Some(1_000)));
        assert_eq!(limits("n", &(-5..10)).unwrap(), (Some(-5), Some(9)));
        assert_eq!(limits("n", &(..)).unwrap(), (None, None));
        assert!(matches!(limits("n", &(..i64::MIN)), Err(CounterError::InvalidArgument { .. })));
    }
}
