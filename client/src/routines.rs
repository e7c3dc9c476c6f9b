//! How each call is made of the package's routines: which statement, with
//! which parameters, and how its answer reads. Written once, for every
//! driver; [`crate::plain`] is the second description of the same calls,
//! in plain SQL, run by the same runners.

use std::borrow::Cow;

use slotted_counters_core::PackageOptions;
use slotted_counters_core::package::{Routine, server_errno};
use slotted_counters_core::plain::EPOCH;

use crate::call::{Answer, Call, Moment, Series, StartDate};
use crate::driver::{Connection, Param, Statement};
use crate::error::CounterError;

/// The statement a session whose call was rolled back runs before the next
/// (see [`Routines::run`]): it does nothing.
const CLEAR_ROLLBACK: &str = "DO 0";

fn statement<'a>(sql: &'a str, params: Vec<Param<'a>>) -> Statement<'a> {
    Statement { sql: Cow::Borrowed(sql), params }
}

/// The statements the calls send, with the package's prefix.
#[derive(Debug, Clone)]
pub struct Routines {
    setup: String,
    increment: String,
    add: String,
    add_many: String,
    add_once: String,
    add_many_once: String,
    forget_writes: String,
    reset: String,
    delete: String,
    /// `counter_get`'s name: a read of n counters calls it n times.
    get: String,
    track: String,
    /// `counter_add_at` and `counter_add_many_at`, each for a moment given
    /// ([`Moment::At`]) and for one before the server's now.
    add_at: [String; 2],
    add_many_at: [String; 2],
    /// The functions' names: a series calls `counter_get_period` once per bucket.
    get_period: String,
    get_range: String,
    expire_periods: String,
    bound: String,
    package: String,
}

/// A moment in SQL, from the seconds since 1970 UTC ([`Moment::At`]) or
/// the microseconds before the server's now ([`Moment::age`]) it takes.
fn moments() -> [String; 2] {
    [time(), "UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND".to_owned()]
}

/// The statement of `texts` for `moment`, and its parameter.
fn at_moment(texts: &[String; 2], moment: Moment) -> (&str, Param<'static>) {
    match (moment, moment.age()) {
        (Moment::At(seconds), _) => (&texts[0], Param::Number(Some(seconds))),
        (_, age) => (&texts[1], Param::Number(age)),
    }
}

/// A time in SQL, from the seconds since 1970 UTC it takes.
fn time() -> String {
    format!("{EPOCH} + INTERVAL ? SECOND")
}

impl Routines {
    pub(crate) fn new(options: &PackageOptions) -> Self {
        let call = |routine: Routine| {
            let placeholders = vec!["?"; routine.arity()].join(", ");
            format!("CALL `{}`({placeholders})", routine.name(options))
        };
        Routines {
            setup: call(Routine::Setup),
            increment: call(Routine::Increment),
            add: call(Routine::Add),
            add_many: call(Routine::AddMany),
            add_once: call(Routine::AddOnce),
            add_many_once: call(Routine::AddManyOnce),
            forget_writes: call(Routine::ForgetWrites),
            reset: call(Routine::Reset),
            delete: call(Routine::Delete),
            get: Routine::Get.name(options),
            track: call(Routine::Track),
            add_at: moments()
                .map(|moment| format!("CALL `{}`(?, ?, {moment})", Routine::AddAt.name(options))),
            add_many_at: moments()
                .map(|moment| format!("CALL `{}`(?, ?, {moment})", Routine::AddManyAt.name(options))),
            get_period: Routine::GetPeriod.name(options),
            get_range: Routine::GetRange.name(options),
            expire_periods: call(Routine::ExpirePeriods),
            bound: call(Routine::Bound),
            package: format!("SELECT `{}`()", Routine::Package.name(options)),
        }
    }

    /// Runs `call` on `conn`: one statement, one round trip.
    pub(crate) async fn run(
        &self,
        conn: &mut impl Connection,
        call: Call<'_>,
    ) -> Result<Answer, CounterError> {
        // A batch's JSON, which its statement borrows.
        let batch = call
            .batch()
            .map(|deltas| serde_json::to_string(deltas).expect("a map of names to numbers is JSON"))
            .unwrap_or_default();
        let write = match call {
            Call::Setup { name, counter } => statement(
                &self.setup,
                vec![
                    Param::Text(name),
                    Param::Text(counter.description),
                    Param::Number(counter.slots.map(i64::from)),
                    Param::Number(counter.initial_value),
                ],
            ),
            Call::Increment { name } => statement(&self.increment, vec![Param::Text(name)]),
            Call::Add { name, delta } => {
                statement(&self.add, vec![Param::Text(name), Param::Number(Some(delta))])
            }
            Call::AddMany { .. } => statement(&self.add_many, vec![Param::Text(&batch)]),
            Call::AddOnce { id, name, delta } => statement(
                &self.add_once,
                vec![Param::Bytes(id), Param::Text(name), Param::Number(Some(delta))],
            ),
            Call::AddManyOnce { id, .. } => {
                statement(&self.add_many_once, vec![Param::Bytes(id), Param::Text(&batch)])
            }
            Call::Reset { name, value, start_date } => statement(
                &self.reset,
                vec![
                    Param::Text(name),
                    Param::Number(Some(value)),
                    Param::Flag(start_date == StartDate::Now),
                ],
            ),
            Call::Delete { name } => statement(&self.delete, vec![Param::Text(name)]),
            Call::ForgetWrites { seconds } => {
                statement(&self.forget_writes, vec![Param::Number(Some(seconds))])
            }
            Call::GetMany { names } => return self.get_many(conn, names).await,
            Call::Track { name, period, keep } => statement(
                &self.track,
                vec![Param::Text(name), Param::Text(period.name()), Param::Number(keep.map(i64::from))],
            ),
            Call::AddAt { name, delta, at } | Call::FlushAdd { name, delta, at } => {
                let (sql, moment) = at_moment(&self.add_at, at);
                statement(sql, vec![Param::Text(name), Param::Number(Some(delta)), moment])
            }
            Call::AddManyAt { id, at, .. } => {
                let (sql, moment) = at_moment(&self.add_many_at, at);
                let id = id.map_or(Param::Number(None), |id| Param::Bytes(id));
                statement(sql, vec![id, Param::Text(&batch), moment])
            }
            Call::ExpirePeriods => statement(&self.expire_periods, Vec::new()),
            Call::Bound { name, floor, ceiling } => {
                statement(&self.bound, vec![Param::Text(name), Param::Number(floor), Param::Number(ceiling)])
            }
            Call::Package => {
                return conn.text(&statement(&self.package, Vec::new())).await.map(Answer::Package);
            }
            Call::GetPeriod { name, period, at } => {
                let read = Statement {
                    sql: Cow::Owned(format!("SELECT `{}`(?, ?, {})", self.get_period, time())),
                    params: vec![Param::Text(name), Param::Text(period.name()), Param::Number(Some(at))],
                };
                return one_row(conn, &read, 1).await.map(|mut row| Answer::Value(row.remove(0)));
            }
            Call::GetRange { name, period, from, to } => {
                let read = Statement {
                    sql: Cow::Owned(format!("SELECT `{}`(?, ?, {}, {})", self.get_range, time(), time())),
                    params: vec![
                        Param::Text(name),
                        Param::Text(period.name()),
                        Param::Number(Some(from)),
                        Param::Number(Some(to)),
                    ],
                };
                return one_row(conn, &read, 1).await.map(|mut row| Answer::Value(row.remove(0)));
            }
            Call::Series { name, period, from, to, starts } => {
                let buckets = vec![format!("`{}`(?, ?, {})", self.get_period, time()); starts.len()];
                let mut params = vec![
                    Param::Text(name),
                    Param::Text(name),
                    Param::Text(period.name()),
                    Param::Number(Some(from)),
                    Param::Number(Some(to)),
                ];
                for &start in starts {
                    params.extend([
                        Param::Text(name),
                        Param::Text(period.name()),
                        Param::Number(Some(start)),
                    ]);
                }
                let read = Statement {
                    sql: Cow::Owned(
                        [
                            format!("SELECT `{}`(?)", self.get),
                            format!("`{}`(?, ?, {}, {})", self.get_range, time(), time()),
                        ]
                        .into_iter()
                        .chain(buckets)
                        .collect::<Vec<_>>()
                        .join(", "),
                    ),
                    params,
                };
                let mut row = one_row(conn, &read, 2 + starts.len()).await?;
                let buckets = row.split_off(2);
                let (total, range) = (row[0], row[1]);
                return Ok(Answer::Series(Series { total, range, buckets }));
            }
        };
        match conn.execute(&write).await {
            Ok(_) => Ok(Answer::Done),
            Err(error) => {
                if error.code() == Some(server_errno::DEADLOCK) {
                    // On Galera, a session whose CALL was rolled back for a
                    // remote write could answer every later CALL at once
                    // with 1213, for a minute and more, until it ran a
                    // statement of another kind (MariaDB 10.11.19,
                    // galera-4 26.4.23): the retry runs one first. Its own
                    // outcome changes nothing of the call's.
                    let _ = conn.execute(&statement(CLEAR_ROLLBACK, Vec::new())).await;
                }
                Err(error)
            }
        }
    }

    /// One `SELECT` of the values of `names`, each `counter_get(?)`.
    async fn get_many(&self, conn: &mut impl Connection, names: &[String]) -> Result<Answer, CounterError> {
        let read = Statement {
            sql: Cow::Owned(format!("SELECT {}", vec![format!("`{}`(?)", self.get); names.len()].join(", "))),
            params: names.iter().map(|name| Param::Text(name)).collect(),
        };
        one_row(conn, &read, names.len()).await.map(Answer::Values)
    }
}

/// The values of `read`, a `SELECT` of `columns` values without `FROM`,
/// which returns one row of them: any other answer is not the server's.
async fn one_row(
    conn: &mut impl Connection,
    read: &Statement<'_>,
    columns: usize,
) -> Result<Vec<Option<i64>>, CounterError> {
    match &mut conn.rows(read).await?[..] {
        [row] if row.len() == columns => Ok(std::mem::take(row)),
        rows => Err(CounterError::unexpected_answer(
            format!(
                "{} rows of {:?} values, where a read of {columns} values answers one row",
                rows.len(),
                rows.iter().map(Vec::len).collect::<Vec<_>>()
            ),
            None,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use slotted_counters_core::package::errno;

    use crate::driver::ready;
    use crate::scripted::{Reply, ScriptedConnection};

    fn increment_on(replies: Vec<Reply>) -> (Result<Answer, CounterError>, Vec<String>) {
        let routines = Routines::new(&PackageOptions::default());
        let mut conn = ScriptedConnection::new(replies);
        let outcome = ready(routines.run(&mut conn, Call::Increment { name: "likes" }));
        (outcome, conn.sent().iter().map(|sent| sent.sql.clone()).collect())
    }

    #[test]
    fn a_call_rolled_back_by_a_deadlock_is_followed_by_a_statement_of_another_kind() {
        let (outcome, sent) = increment_on(vec![Reply::Error(server_errno::DEADLOCK), Reply::Changed(0)]);
        assert_eq!(outcome.unwrap_err().code(), Some(server_errno::DEADLOCK));
        assert_eq!(sent, ["CALL `counter_increment`(?)", CLEAR_ROLLBACK]);
    }

    #[test]
    fn the_call_fails_with_its_own_error_when_the_clearing_statement_fails_too() {
        let (outcome, sent) = increment_on(vec![
            Reply::Error(server_errno::DEADLOCK),
            Reply::Error(server_errno::LOCK_WAIT_TIMEOUT),
        ]);
        assert_eq!(outcome.unwrap_err().code(), Some(server_errno::DEADLOCK));
        assert_eq!(sent.len(), 2);
    }

    #[test]
    fn other_errors_and_successes_send_nothing_more() {
        for reply in [
            Reply::Changed(1),
            Reply::Error(server_errno::LOCK_WAIT_TIMEOUT),
            Reply::Error(errno::UNKNOWN_COUNTER),
        ] {
            let (_, sent) = increment_on(vec![reply.clone()]);
            assert_eq!(sent, ["CALL `counter_increment`(?)"], "after {reply:?}");
        }
    }
}
