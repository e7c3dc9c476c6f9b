//! How the callers of one bounded counter are answered when their summed
//! delta would have passed its bound, or a limit of its period (a
//! quota's, which a write approaches as it does a ceiling): each gets its
//! own outcome, exactly as many as fit succeed, and none is refused while
//! the room for it is there.
//!
//! The callers are applied in groups, each group one write of its sum.
//! A group refused for a bound ([`CounterError::PastBound`], which says
//! the room the counter had toward that bound) is settled from that room:
//! its callers that move away from the bound go first, on their own,
//! making room; of the others, each whose delta alone exceeds the room is
//! refused with that refusal (it did not fit then), and the longest run
//! of the rest that fits the room goes next, then what is left. A flush of
//! 64 takes of 1 with 10 units left is three writes: the 64 (refused,
//! room 10), the first 10 (applied), the other 54 (refused, room 0).

use std::collections::VecDeque;

use crate::call::Moment;
use crate::engine::{Driver, Engine};
use crate::error::{Bound, CounterError};

/// Each caller's outcome, for callers of counter `name` whose deltas are
/// `deltas` (in their order), whose sum was refused with `refusal`: each
/// group's sum written through `engine`, counted at `at`.
pub(super) async fn settle<D: Driver>(
    engine: &Engine<D>,
    name: &str,
    at: Moment,
    deltas: &[i64],
    refusal: CounterError,
) -> Vec<Result<(), CounterError>> {
    let mut outcomes: Vec<Option<Result<(), CounterError>>> = vec![None; deltas.len()];
    let mut groups: VecDeque<(Vec<usize>, Option<CounterError>)> =
        VecDeque::from([((0..deltas.len()).collect(), Some(refusal))]);
    while let Some((group, refused)) = groups.pop_front() {
        let refusal = match refused {
            Some(refusal) => refusal,
            None => {
                let Some(sum) = group.iter().try_fold(0_i64, |sum, &caller| sum.checked_add(deltas[caller]))
                else {
                    // The flush's sum fits BIGINT, in its order, and this
                    // part of it does not: halves, each tried anew.
                    halve(&mut groups, &group);
                    continue;
                };
                match engine.add_counted_at(name, sum, at).await {
                    Ok(()) => {
                        group.iter().for_each(|&caller| outcomes[caller] = Some(Ok(())));
                        continue;
                    }
                    Err(refusal) => refusal,
                }
            }
        };
        let (bound, room) = match refusal {
            CounterError::PastBound { bound, room, .. } => (bound, room),
            // A refund moves away from a limit, as from a ceiling.
            CounterError::PastLimit { room, .. } => (Bound::Ceiling, room),
            refusal => {
                group.iter().for_each(|&caller| outcomes[caller] = Some(Err(refusal.clone())));
                continue;
            }
        };
        if group.len() == 1 {
            outcomes[group[0]] = Some(Err(refusal));
            continue;
        }
        let (toward, away): (Vec<usize>, Vec<usize>) =
            group.iter().partition(|&&caller| bound.is_approached_by(deltas[caller]));
        if !away.is_empty() {
            groups.push_front((toward, None));
            groups.push_front((away, None));
            continue;
        }
        let (fitting, too_large): (Vec<usize>, Vec<usize>) =
            toward.into_iter().partition(|&caller| deltas[caller].unsigned_abs() <= room);
        let refused_alone = !too_large.is_empty();
        for caller in too_large {
            outcomes[caller] = Some(Err(refusal.clone()));
        }
        let mut taken = 0_u64;
        let run = fitting
            .iter()
            .take_while(|&&caller| {
                taken = taken.saturating_add(deltas[caller].unsigned_abs());
                taken <= room
            })
            .count();
        match run {
            0 => {}
            // The rest fits the room once the larger ones are out.
            run if run == fitting.len() && refused_alone => groups.push_front((fitting, None)),
            // Nothing above its room, yet refused: the room is another
            // moment's. Halves, each tried anew.
            run if run == fitting.len() => halve(&mut groups, &fitting),
            run => {
                groups.push_front((fitting[run..].to_vec(), None));
                groups.push_front((fitting[..run].to_vec(), None));
            }
        }
    }
    outcomes.into_iter().map(|outcome| outcome.unwrap_or(Err(CounterError::FlushPanicked))).collect()
}

/// Puts the two halves of `group`, each to be written anew, first in
/// `groups`, in the callers' order. Only a group of two callers or more is
/// halved: one caller's delta is written, or refused, alone.
fn halve(groups: &mut VecDeque<(Vec<usize>, Option<CounterError>)>, group: &[usize]) {
    let (first, second) = group.split_at(group.len() / 2);
    groups.push_front((second.to_vec(), None));
    groups.push_front((first.to_vec(), None));
}

#[cfg(test)]
mod tests {
    use slotted_counters_core::PackageOptions;

    use super::*;
    use crate::driver::ready;
    use crate::scripted::{Arg, Reply, ScriptedDriver};

    /// Settles callers of `deltas`, whose sum was refused with `room` left
    /// toward a floor, through a server answering `replies`: whether each
    /// succeeded, and the sums written.
    fn settled(room: u64, deltas: &[i64], replies: Vec<Reply>) -> (Vec<bool>, Vec<Arg>) {
        let engine = Engine::routines_only(ScriptedDriver::new(replies), &PackageOptions::default());
        let refusal = Bound::Floor.refusal("stock", 0, room);
        let outcomes = ready(settle(&engine, "stock", Moment::Now, deltas, refusal));
        assert!(engine.driver().script_done());
        let written = engine.driver().sent().into_iter().map(|sent| sent.params[1].clone()).collect();
        (outcomes.iter().map(Result::is_ok).collect(), written)
    }

    #[test]
    fn exactly_as_many_takes_as_fit_succeed_in_two_more_writes() {
        let (outcomes, written) = settled(10, &[-1; 64], vec![Reply::Changed(1), Reply::PastFloor(0)]);
        assert_eq!(outcomes.iter().filter(|&&ok| ok).count(), 10);
        assert!(outcomes[..10].iter().all(|&ok| ok), "the first callers, in their order");
        assert_eq!(written, [Arg::number(-10), Arg::number(-54)]);
    }

    #[test]
    fn a_take_larger_than_the_room_is_refused_and_smaller_ones_after_it_fit() {
        let (outcomes, written) = settled(5, &[-3, -7, -2, -1], vec![Reply::Changed(1), Reply::PastFloor(0)]);
        assert_eq!(outcomes, [true, false, true, false]);
        assert_eq!(written, [Arg::number(-5), Arg::number(-1)]);
    }

    #[test]
    fn a_restock_in_the_same_flush_is_applied_first_and_sold() {
        use Reply::{Changed, PastFloor};
        // 0 left: the restock of 3, then the four takes (refused, 3 left),
        // the first three, the last (refused).
        let replies = vec![Changed(1), PastFloor(3), Changed(1), PastFloor(0)];
        let (outcomes, written) = settled(0, &[-1, -1, 3, -1, -1], replies);
        assert_eq!(outcomes, [true, true, true, true, false]);
        assert_eq!(written, [Arg::number(3), Arg::number(-4), Arg::number(-3), Arg::number(-1)]);
    }

    #[test]
    fn with_no_room_every_take_is_refused_at_once_with_the_room() {
        let engine = Engine::routines_only(ScriptedDriver::new([]), &PackageOptions::default());
        let refusal = Bound::Floor.refusal("stock", 0, 0);
        let outcomes = ready(settle(&engine, "stock", Moment::Now, &[-1, -2, -1], refusal));
        for outcome in outcomes {
            assert!(matches!(outcome, Err(CounterError::PastBound { bound: Bound::Floor, room: 0, .. })));
        }
        assert!(engine.driver().sent().is_empty(), "no write can fit");
    }

    #[test]
    fn another_failure_of_a_group_fails_its_callers_alone() {
        let (outcomes, _) = settled(2, &[-1, -1, -1], vec![Reply::Changed(1), Reply::Error(1142)]);
        assert_eq!(outcomes, [true, true, false]);
    }

    #[test]
    fn takes_that_together_pass_bigint_are_written_apart() {
        // The flush's sum fits, in its order; the takes alone (the restock
        // of 5 applied first) do not.
        let replies = vec![Reply::Changed(1), Reply::PastFloor(3), Reply::Changed(1)];
        let (outcomes, written) = settled(3, &[i64::MIN, 5, -5], replies);
        assert_eq!(outcomes, [false, true, true]);
        assert_eq!(written, [Arg::number(5), Arg::number(-9223372036854775808), Arg::number(-5)]);
    }

    #[test]
    fn the_takes_that_fit_once_a_larger_one_is_out_are_written_together() {
        let (outcomes, written) = settled(5, &[-3, -7, -2], vec![Reply::Changed(1)]);
        assert_eq!(outcomes, [true, false, true]);
        assert_eq!(written, [Arg::number(-5)]);
    }
}
