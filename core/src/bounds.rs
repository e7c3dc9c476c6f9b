//! Bounded counters: a floor and a ceiling that a counter's total never
//! passes (`counter_bound`). Each slot row holds its share of them, its own
//! least and most (`lowest`, `highest`), which add up to the floor and the
//! ceiling, and every write keeps its slot within its shares: so the total
//! stays within the bounds whatever the concurrency. A write its slot
//! cannot take alone locks every slot, checks the bound on the total, and
//! spreads the new total over the slots: what [`Spread`] computes, as the
//! routines compute it in SQL.

/// A bounded counter's new total written evenly over its slots, each with
/// an even share of the room toward each bound. Slot `k` of `n` (from 1)
/// holds `share + (k <= share_left)`; below that it may go by
/// `floor_room + (k <= floor_room_left)`, above by the same of the ceiling.
/// The shares of a value add up to it exactly, for any sign: floor division.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spread {
    pub share: i64,
    pub share_left: i64,
    /// `None` without a floor.
    pub floor_room: Option<(i64, i64)>,
    /// `None` without a ceiling.
    pub ceiling_room: Option<(i64, i64)>,
}

impl Spread {
    /// `value` over `slots` slots (at least 1), with room down to `floor`
    /// and up to `ceiling`, which must hold it.
    pub fn new(value: i64, slots: u32, floor: Option<i64>, ceiling: Option<i64>) -> Self {
        let split = |amount: i64| {
            let slots = i64::from(slots.max(1));
            (amount.div_euclid(slots), amount.rem_euclid(slots))
        };
        let (share, share_left) = split(value);
        Spread {
            share,
            share_left,
            floor_room: floor.map(|floor| split(value - floor)),
            ceiling_room: ceiling.map(|ceiling| split(ceiling - value)),
        }
    }

    /// What slot `slot` (from 1) holds, and its least and most.
    pub fn slot(&self, slot: u32) -> (i64, Option<i64>, Option<i64>) {
        let part = |(quotient, left): (i64, i64)| quotient + i64::from(i64::from(slot) <= left);
        let value = part((self.share, self.share_left));
        (
            value,
            self.floor_room.map(|room| value - part(room)),
            self.ceiling_room.map(|room| value + part(room)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spread_adds_up_to_its_value_and_bounds_with_every_slot_within_its_own() {
        for (value, slots, floor, ceiling) in [
            (1_000, 64, Some(0), None),
            (-7, 3, Some(-100), Some(5)),
            (5, 8, None, Some(5)),
            (0, 1, Some(0), Some(0)),
            (999, 1024, Some(-3), Some(10_000)),
        ] {
            let spread = Spread::new(value, slots, floor, ceiling);
            let rows: Vec<_> = (1..=slots).map(|slot| spread.slot(slot)).collect();
            assert_eq!(rows.iter().map(|row| row.0).sum::<i64>(), value);
            if let Some(floor) = floor {
                assert_eq!(rows.iter().map(|row| row.1.unwrap()).sum::<i64>(), floor);
            }
            if let Some(ceiling) = ceiling {
                assert_eq!(rows.iter().map(|row| row.2.unwrap()).sum::<i64>(), ceiling);
            }
            for (value, lowest, highest) in rows {
                assert!(lowest.is_none_or(|lowest| lowest <= value) && highest.is_none_or(|h| value <= h));
            }
        }
    }

    #[test]
    fn the_room_is_shared_evenly() {
        let spread = Spread::new(10, 4, Some(0), None);
        let rooms: Vec<i64> = (1..=4).map(|slot| spread.slot(slot)).map(|(v, l, _)| v - l.unwrap()).collect();
        assert_eq!(rooms, [3, 3, 2, 2]);
    }
}
