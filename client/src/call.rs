//! What a counter call asks for, apart from how it reaches the server: the
//! calls both clients make, with their arguments already checked.

use std::collections::BTreeMap;

use slotted_counters_core::refusals::{self, FOR_COUNTER};

use crate::error::CounterError;

/// A counter for `setup` to create: its description, and the slot count
/// and starting value unless the package's defaults will do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewCounter<'a> {
    pub(crate) description: &'a str,
    pub(crate) slots: Option<u32>,
    pub(crate) initial_value: Option<i64>,
}

impl<'a> NewCounter<'a> {
    /// A counter described by `description`, with the package's default
    /// slot count (fixed-slot packages take only their own), starting at 0.
    pub fn new(description: &'a str) -> Self {
        NewCounter { description, slots: None, initial_value: None }
    }

    /// With `slots` slot rows.
    pub fn slots(self, slots: u32) -> Self {
        NewCounter { slots: Some(slots), ..self }
    }

    /// Starting at `value`, kept in slot 1.
    pub fn initial_value(self, value: i64) -> Self {
        NewCounter { initial_value: Some(value), ..self }
    }
}

/// What `reset` does to a counter's start date.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartDate {
    /// The start date stays: the reset corrects the value.
    Keep,
    /// The start date becomes now: counting starts over.
    Now,
}

/// Deltas summed per counter, in the order of the names: what one batch
/// applies.
pub(crate) type Deltas = BTreeMap<String, i64>;

/// The id a write carries, chosen at random by the client for each write
/// and kept through its retries, so that the server counts it once.
pub(crate) type WriteId = [u8; 16];

/// A fresh write id: 16 bytes from the operating system's random source.
pub(crate) fn new_write_id() -> WriteId {
    let mut id = WriteId::default();
    getrandom::fill(&mut id).expect("the operating system's random source answers");
    id
}

/// One counter call. Names are checked against the package's rule before a
/// call is made.
#[derive(Debug, Clone, Copy)]
pub enum Call<'a> {
    Setup {
        name: &'a str,
        counter: NewCounter<'a>,
    },
    Increment {
        name: &'a str,
    },
    Add {
        name: &'a str,
        delta: i64,
    },
    AddMany {
        deltas: &'a Deltas,
    },
    /// An add that carries a write id: counted once however often it runs.
    AddOnce {
        id: &'a WriteId,
        name: &'a str,
        delta: i64,
    },
    /// A batch that carries a write id.
    AddManyOnce {
        id: &'a WriteId,
        deltas: &'a Deltas,
    },
    /// Forgets the write ids recorded more than `seconds` ago.
    ForgetWrites {
        seconds: i64,
    },
    Reset {
        name: &'a str,
        value: i64,
        start_date: StartDate,
    },
    Delete {
        name: &'a str,
    },
    GetMany {
        names: &'a [String],
    },
}

impl Call<'_> {
    /// The call's name, as its events show it.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Call::Setup { .. } => "setup",
            Call::Increment { .. } => "increment",
            Call::Add { .. } => "add",
            Call::AddMany { .. } => "add_many",
            Call::AddOnce { .. } => "add_once",
            Call::AddManyOnce { .. } => "add_many_once",
            Call::ForgetWrites { .. } => "forget_writes",
            Call::Reset { .. } => "reset",
            Call::Delete { .. } => "delete",
            Call::GetMany { .. } => "get_many",
        }
    }

    /// Whether running the call again after a lost answer cannot count it
    /// twice: it carries a write id.
    pub(crate) fn carries_id(&self) -> bool {
        matches!(self, Call::AddOnce { .. } | Call::AddManyOnce { .. })
    }
}

/// What a call answers: nothing for a write, one value per name for a read.
#[derive(Debug)]
pub enum Answer {
    Done,
    Values(Vec<Option<i64>>),
}

impl Answer {
    /// The values of a read; a write's answer has none.
    pub(crate) fn values(self) -> Vec<Option<i64>> {
        match self {
            Answer::Values(values) => values,
            Answer::Done => Vec::new(),
        }
    }
}

/// Adds `delta` to the sum `deltas` holds for `name`, refusing a sum past
/// BIGINT.
pub(crate) fn add_delta(deltas: &mut Deltas, name: &str, delta: i64) -> Result<(), CounterError> {
    match deltas.get_mut(name) {
        Some(sum) => {
            *sum = sum.checked_add(delta).ok_or_else(|| {
                CounterError::InvalidArgument(refusals::about(
                    &format!("the deltas add up past a BIGINT{FOR_COUNTER}"),
                    name,
                ))
            })?;
        }
        None => {
            deltas.insert(name.to_owned(), delta);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_for_one_name_are_summed() {
        let mut deltas = Deltas::new();
        for (name, delta) in [("views", 2), ("likes", 1), ("views", -5)] {
            add_delta(&mut deltas, name, delta).unwrap();
        }
        assert_eq!(deltas, Deltas::from([("likes".to_owned(), 1), ("views".to_owned(), -3)]));
    }

    #[test]
    fn deltas_that_add_up_past_a_bigint_are_refused() {
        let mut deltas = Deltas::from([("n".to_owned(), i64::MAX)]);
        let error = add_delta(&mut deltas, "n", 1).unwrap_err();
        assert!(
            matches!(&error, CounterError::InvalidArgument(message) if message.ends_with("for counter: 'n'")),
            "{error:?}"
        );
    }
}
