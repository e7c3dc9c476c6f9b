//! The plain mode's reading of its statements' answers: each row as the
//! values its statement selects, and each value that cannot be NULL, or an
//! unexpected answer naming what was read. No default stands in for a row
//! or a value that is not there; a zero the server sends (a
//! `COALESCE(SUM(...), 0)`) is an answer.

use crate::error::CounterError;

/// Rows of nullable BIGINTs, as a statement answers.
type Rows = Vec<Vec<Option<i64>>>;

fn unexpected(what: &str, problem: impl std::fmt::Display) -> CounterError {
    CounterError::unexpected_answer(format!("{what}: {problem}"), None)
}

/// Each of `rows` as the `N` values of `what`.
pub(super) fn rows_of<const N: usize>(rows: Rows, what: &str) -> Result<Vec<[Option<i64>; N]>, CounterError> {
    rows.into_iter()
        .map(|row| {
            <[Option<i64>; N]>::try_from(row)
                .map_err(|row| unexpected(what, format_args!("{N} values expected, not {row:?}")))
        })
        .collect()
}

/// The row of `what`, if there is one.
pub(super) fn row_of<const N: usize>(
    rows: Rows,
    what: &str,
) -> Result<Option<[Option<i64>; N]>, CounterError> {
    let mut rows = rows_of::<N>(rows, what)?;
    match rows.len() {
        0 | 1 => Ok(rows.pop()),
        count => Err(unexpected(what, format_args!("at most one row expected, not {count}"))),
    }
}

/// The one row of `what`, which always answers one (an aggregate).
pub(super) fn one_row<const N: usize>(rows: Rows, what: &str) -> Result<[Option<i64>; N], CounterError> {
    row_of::<N>(rows, what)?.ok_or_else(|| unexpected(what, "one row expected, not 0"))
}

/// A value of `what` that is never NULL.
pub(super) fn present(value: Option<i64>, what: &str) -> Result<i64, CounterError> {
    value.ok_or_else(|| unexpected(what, "a value expected, not NULL"))
}

/// The one value of the one row of `what`.
pub(super) fn one_value(rows: Rows, what: &str) -> Result<i64, CounterError> {
    let [value] = one_row(rows, what)?;
    present(value, what)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_long_missing_or_null_answer_is_unexpected_and_a_zero_is_an_answer() {
        fn unexpected<T>(result: Result<T, CounterError>) -> bool {
            matches!(result, Err(CounterError::UnexpectedAnswer { .. }))
        }
        assert!(unexpected(rows_of::<2>(vec![vec![Some(1)]], "x")));
        assert!(unexpected(rows_of::<2>(vec![vec![Some(1), None, None]], "x")));
        assert_eq!(rows_of::<2>(vec![vec![Some(1), None]], "x").unwrap(), [[Some(1), None]]);
        assert_eq!(row_of::<1>(Vec::new(), "x").unwrap(), None);
        assert!(unexpected(row_of::<1>(vec![vec![Some(1)], vec![Some(2)]], "x")));
        assert!(unexpected(one_row::<1>(Vec::new(), "x")));
        assert!(unexpected(one_value(vec![vec![None]], "x")));
        assert_eq!(one_value(vec![vec![Some(0)]], "x").unwrap(), 0);
        let error = one_value(Vec::new(), "the server's clock").unwrap_err();
        assert_eq!(
            error.to_string(),
            "the answer is not the call's: the server's clock: one row expected, not 0"
        );
    }
}
