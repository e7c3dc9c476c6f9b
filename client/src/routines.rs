//! How each call is made of the package's routines: which statement, with
//! which parameters, and how its answer reads. Written once, for every
//! driver; [`crate::plain`] is the second description of the same calls,
//! in plain SQL, run by the same runners.

use std::borrow::Cow;

use slotted_counters_core::PackageOptions;
use slotted_counters_core::package::{Routine, server_errno};
use slotted_counters_core::plain::EPOCH;

use slotted_counters_core::periods::Period;

use crate::call::{Answer, Call, Moment, Room, Series, StartDate};
use crate::driver::{Connection, Param, Statement};
use crate::error::CounterError;

/// The statement a session whose call was rolled back runs before the next
/// (see [`write_clearing_a_rollback`]): it does nothing.
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
    track_at_offset: String,
    /// `counter_add_at` and `counter_add_many_at`, each for a moment given
    /// ([`Moment::At`]) and for one before the server's now.
    add_at: [String; 2],
    add_many_at: [String; 2],
    /// The functions' names: a series calls `counter_get_range` once per
    /// bucket, which reads a bucket of the future as 0 where a point read
    /// refuses it.
    get_period: String,
    get_range: String,
    utc_offset: String,
    expire_periods: String,
    bound: String,
    limit: String,
    room: String,
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
            track_at_offset: call(Routine::TrackAtOffset),
            add_at: moments()
                .map(|moment| format!("CALL `{}`(?, ?, {moment})", Routine::AddAt.name(options))),
            add_many_at: moments()
                .map(|moment| format!("CALL `{}`(?, ?, {moment})", Routine::AddManyAt.name(options))),
            get_period: Routine::GetPeriod.name(options),
            get_range: Routine::GetRange.name(options),
            utc_offset: Routine::UtcOffset.name(options),
            expire_periods: call(Routine::ExpirePeriods),
            bound: call(Routine::Bound),
            limit: call(Routine::Limit),
            room: call(Routine::Room),
            package: format!("SELECT `{}`()", Routine::Package.name(options)),
        }
    }

    /// Runs `call` on `conn`: one statement, one round trip, its answer
    /// read as the call's kind says.
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
        match self.request(call, &batch) {
            Request::Write(write) => write_clearing_a_rollback(conn, &write).await.map(|()| Answer::Done),
            Request::Read(read, reading) => {
                one_row(conn, &read, reading.columns()).await.map(|row| reading.answer(row))
            }
            Request::Package(read) => conn.text(&read).await.map(Answer::Package),
            Request::Room(read) => {
                let rows = conn.texts(&read).await?;
                let room: Option<Vec<Room>> = rows.iter().map(|row| Room::read(row)).collect();
                room.map(Answer::Room).ok_or_else(|| {
                    CounterError::unexpected_answer(
                        format!("{rows:?} where counter_room answers its rows"),
                        None,
                    )
                })
            }
        }
    }

    /// What `call` sends, with `batch` as a batch's JSON, and how its
    /// answer reads.
    fn request<'a>(&'a self, call: Call<'a>, batch: &'a str) -> Request<'a> {
        let write = |sql: &'a str, params| Request::Write(statement(sql, params));
        match call {
            Call::Setup { name, counter } => write(
                &self.setup,
                vec![
                    Param::Text(name),
                    Param::Text(counter.description),
                    Param::Number(counter.slots.map(i64::from)),
                    Param::Number(counter.initial_value),
                ],
            ),
            Call::Increment { name } => write(&self.increment, vec![Param::Text(name)]),
            Call::Add { name, delta } => {
                write(&self.add, vec![Param::Text(name), Param::Number(Some(delta))])
            }
            Call::AddMany { .. } => write(&self.add_many, vec![Param::Text(batch)]),
            Call::AddOnce { id, name, delta } => {
                write(&self.add_once, vec![Param::Bytes(id), Param::Text(name), Param::Number(Some(delta))])
            }
            Call::AddManyOnce { id, .. } => {
                write(&self.add_many_once, vec![Param::Bytes(id), Param::Text(batch)])
            }
            Call::Reset { name, value, start_date } => write(
                &self.reset,
                vec![
                    Param::Text(name),
                    Param::Number(Some(value)),
                    Param::Flag(start_date == StartDate::Now),
                ],
            ),
            Call::Delete { name } => write(&self.delete, vec![Param::Text(name)]),
            Call::ForgetWrites { seconds } => write(&self.forget_writes, vec![Param::Number(Some(seconds))]),
            Call::Track { name, period, keep, offset: None } => write(
                &self.track,
                vec![Param::Text(name), Param::Text(period.name()), Param::Number(keep.map(i64::from))],
            ),
            Call::Track { name, period, keep, offset: Some(offset) } => write(
                &self.track_at_offset,
                vec![
                    Param::Text(name),
                    Param::Text(period.name()),
                    Param::Number(keep.map(i64::from)),
                    Param::Number(Some(offset.as_minutes().into())),
                ],
            ),
            Call::UtcOffset { name, period } => Request::Read(
                select(
                    vec![format!("`{}`(?, ?)", self.utc_offset)],
                    vec![Param::Text(name), Param::Text(period.name())],
                ),
                Reading::Value,
            ),
            Call::AddAt { name, delta, at } | Call::FlushAdd { name, delta, at } => {
                let (sql, moment) = at_moment(&self.add_at, at);
                write(sql, vec![Param::Text(name), Param::Number(Some(delta)), moment])
            }
            Call::AddManyAt { id, at, .. } => {
                let (sql, moment) = at_moment(&self.add_many_at, at);
                let id = id.map_or(Param::Number(None), |id| Param::Bytes(id));
                write(sql, vec![id, Param::Text(batch), moment])
            }
            Call::ExpirePeriods => write(&self.expire_periods, Vec::new()),
            Call::Bound { name, floor, ceiling } => {
                write(&self.bound, vec![Param::Text(name), Param::Number(floor), Param::Number(ceiling)])
            }
            Call::Limit { name, period, highest } => write(
                &self.limit,
                vec![Param::Text(name), Param::Text(period.name()), Param::Number(highest)],
            ),
            Call::Room { name } => Request::Room(statement(&self.room, vec![Param::Text(name)])),
            Call::Package => Request::Package(statement(&self.package, Vec::new())),
            Call::GetMany { names } => Request::Read(
                select(
                    vec![format!("`{}`(?)", self.get); names.len()],
                    names.iter().map(|name| Param::Text(name)).collect(),
                ),
                Reading::Values(names.len()),
            ),
            Call::GetPeriod { name, period, at } => Request::Read(
                select(
                    vec![format!("`{}`(?, ?, {})", self.get_period, time())],
                    vec![Param::Text(name), Param::Text(period.name()), Param::Number(Some(at))],
                ),
                Reading::Value,
            ),
            Call::GetRange { name, period, from, to } => Request::Read(
                select(vec![self.range()], range_params(name, period, from, to).into()),
                Reading::Value,
            ),
            Call::Series { name, period, from, to, bounds } => {
                let mut values = vec![format!("`{}`(?)", self.get), self.range()];
                let mut params = vec![Param::Text(name)];
                params.extend(range_params(name, period, from, to));
                for bucket in bounds.windows(2) {
                    values.push(self.range());
                    params.extend(range_params(name, period, bucket[0], bucket[1]));
                }
                Request::Read(
                    select(values, params),
                    Reading::Series { buckets: bounds.len().saturating_sub(1) },
                )
            }
        }
    }

    /// `counter_get_range` of a range given as two times.
    fn range(&self) -> String {
        format!("`{}`(?, ?, {}, {})", self.get_range, time(), time())
    }
}

/// The parameters of [`Routines::range`].
fn range_params(name: &str, period: Period, from: i64, to: i64) -> [Param<'_>; 4] {
    [Param::Text(name), Param::Text(period.name()), Param::Number(Some(from)), Param::Number(Some(to))]
}

/// A `SELECT` of `values`, without `FROM`.
fn select(values: Vec<String>, params: Vec<Param<'_>>) -> Statement<'_> {
    Statement { sql: Cow::Owned(format!("SELECT {}", values.join(", "))), params }
}

/// What a call sends, by what it answers.
#[derive(Debug)]
enum Request<'a> {
    /// A `CALL` that answers nothing.
    Write(Statement<'a>),
    /// A `SELECT` of one row of values, which read as the [`Reading`] says.
    Read(Statement<'a>, Reading),
    /// `SELECT counter_package()`, which answers a line of text.
    Package(Statement<'a>),
    /// `CALL counter_room(name)`, which answers a row per bound and limit.
    Room(Statement<'a>),
}

/// How the one row a read answers reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// One value per counter named.
    Values(usize),
    /// One count: a period's or a range's.
    Value,
    /// The total, what the range counted, then each of `buckets` buckets.
    Series { buckets: usize },
}

impl Reading {
    /// How many values the row holds.
    fn columns(self) -> usize {
        match self {
            Reading::Values(names) => names,
            Reading::Value => 1,
            Reading::Series { buckets } => 2 + buckets,
        }
    }

    /// The answer of `row`, which holds [`Reading::columns`] values.
    fn answer(self, mut row: Vec<Option<i64>>) -> Answer {
        match self {
            Reading::Values(_) => Answer::Values(row),
            Reading::Value => Answer::Value(row[0]),
            Reading::Series { .. } => {
                let buckets = row.split_off(2);
                Answer::Series(Series { total: row[0], range: row[1], buckets })
            }
        }
    }
}

/// Runs `write`. After a deadlock, runs a statement of another kind first,
/// for the next call's sake: on Galera, a session whose CALL was rolled
/// back for a remote write could answer every later CALL at once with 1213,
/// for a minute and more, until it ran a statement of another kind
/// (MariaDB 10.11.19, galera-4 26.4.23). Its own outcome changes nothing
/// of the call's.
async fn write_clearing_a_rollback(
    conn: &mut impl Connection,
    write: &Statement<'_>,
) -> Result<(), CounterError> {
    let outcome = conn.execute(write).await.map(drop);
    if let Err(error) = &outcome
        && error.code() == Some(server_errno::DEADLOCK)
    {
        let _ = conn.execute(&statement(CLEAR_ROLLBACK, Vec::new())).await;
    }
    outcome
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
    use crate::scripted::{Arg, Reply, ScriptedConnection, answer};

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

    #[test]
    fn a_series_reads_the_total_the_range_then_each_bucket_as_the_range_of_its_bounds() {
        let routines = Routines::new(&PackageOptions::default());
        let day = "TIMESTAMP'1970-01-01 00:00:00' + INTERVAL ? SECOND";
        let range = format!("`counter_get_range`(?, ?, {day}, {day})");
        let read = format!("SELECT `counter_get`(?), {range}, {range}, {range}");
        let mut conn = ScriptedConnection::new([answer(
            &read,
            Reply::Rows(vec![vec![Some(9), Some(5), Some(2), Some(3)]]),
        )]);
        let call = Call::Series {
            name: "likes",
            period: Period::Day,
            from: 0,
            to: 172_800,
            bounds: &[0, 86_400, 172_800],
        };

        let series = ready(routines.run(&mut conn, call)).unwrap().series().unwrap();

        assert_eq!(series, Series { total: Some(9), range: Some(5), buckets: vec![Some(2), Some(3)] });
        let (likes, day) = (Arg::text("likes"), Arg::text("day"));
        let range = |from, to| [likes.clone(), day.clone(), Arg::number(from), Arg::number(to)];
        let mut expected = vec![likes.clone()];
        for (from, to) in [(0, 172_800), (0, 86_400), (86_400, 172_800)] {
            expected.extend(range(from, to));
        }
        assert_eq!(conn.sent()[0].params, expected);
    }

    #[test]
    fn a_read_of_many_counters_answers_one_value_per_name_and_a_write_answers_nothing() {
        let routines = Routines::new(&PackageOptions::default());
        let names = ["a".to_owned(), "b".to_owned()];
        let mut conn = ScriptedConnection::new([
            answer("SELECT `counter_get`(?), `counter_get`(?)", Reply::Rows(vec![vec![Some(1), None]])),
            answer("CALL `counter_add`(?, ?)", Reply::Changed(1)),
        ]);

        let values = ready(routines.run(&mut conn, Call::GetMany { names: &names })).unwrap();
        let write = ready(routines.run(&mut conn, Call::Add { name: "a", delta: 2 })).unwrap();

        assert_eq!(values.values().unwrap(), [Some(1), None]);
        assert!(matches!(write, Answer::Done), "{write:?}");
    }
}
