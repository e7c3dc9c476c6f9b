//! Recounting counters from their source of truth while writes go on. The
//! source's counts and the counters' values are read in one consistent
//! snapshot, where a counter kept in the same transactions as its source
//! agrees with it unless it drifted; the difference is then added as an
//! ordinary write with a write id, in a transaction of its own, so that
//! writes committed meanwhile count on top and a lost answer neither loses
//! nor doubles it. Reconciles of one package wait for each other, on a
//! named lock of the server's, so that two never add the same drift.

mod placeholders;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::time::Duration;

use slotted_counters_core::package::server_errno;

use crate::call::{Answer, Call, Correction, Drift, Reconcile, WriteId};
use crate::driver::{Connection, Owner, Param, Statement};
use crate::error::CounterError;
use crate::mode::Mode;
use placeholders::placeholders;

/// How long a reconcile waits for another of the same package to finish.
pub const RECONCILE_WAIT: Duration = Duration::from_secs(60);

/// The most counters one statement reads the values of.
const READ_BATCH: usize = 500;

/// A reconcile as a call: what to reconcile, the package's slot table
/// (where a set finds its members: the plain mode's tables make no view),
/// the name of its view of totals (which keys the lock of reconciles, as
/// in earlier versions, so that their clients wait for this one's), and
/// the write id each counter's correction derives its own from, kept
/// through the retries.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReconcileCall<'a> {
    pub(crate) reconcile: Reconcile<'a>,
    pub(crate) table: &'a str,
    pub(crate) totals_view: &'a str,
    pub(crate) id: &'a WriteId,
}

fn text<'a>(sql: impl Into<Cow<'a, str>>, params: Vec<Param<'a>>) -> Statement<'a> {
    Statement { sql: sql.into(), params }
}

/// The server's named lock of the reconciles of the package whose view of
/// totals is the parameter, in the current database: 57 characters, within
/// the 64 a lock's name may have. SHA2, not SHA1, which MySQL 9.7 no longer
/// has (1305).
const LOCK_NAME: &str = "CONCAT('slotted_counters:', LEFT(SHA2(CONCAT(DATABASE(), '.', ?), 256), 40))";

/// The write id of counter `name`'s correction, from the reconcile's.
fn correction_id(id: &WriteId, name: &str) -> WriteId {
    let mut id = *id;
    for (half, seed) in id.chunks_mut(8).zip([0_u8, 1]) {
        let mut hasher = DefaultHasher::new();
        (seed, name).hash(&mut hasher);
        for (byte, mixed) in half.iter_mut().zip(hasher.finish().to_le_bytes()) {
            *byte ^= mixed;
        }
    }
    id
}

/// Runs `call` on `conn`, holding the package's lock of reconciles.
pub(crate) async fn run(
    mode: &Mode,
    conn: &mut impl Connection,
    call: ReconcileCall<'_>,
) -> Result<Vec<Drift>, CounterError> {
    check(&call.reconcile)?;
    if !call.reconcile.dry_run {
        refuse_a_read_only_server(conn).await?;
    }
    let wait = i64::try_from(RECONCILE_WAIT.as_secs()).unwrap_or(i64::MAX);
    let lock = text(
        format!("SELECT GET_LOCK({LOCK_NAME}, ?)"),
        vec![Param::Text(call.totals_view), Param::Number(Some(wait))],
    );
    let held = conn.rows(&lock).await?.first().and_then(|row| row.first().copied().flatten());
    match held {
        Some(1) => {}
        Some(0) => {
            return Err(CounterError::Busy {
                message: format!(
                    "another reconcile of these counters has run for more than {} s: try again when it is done",
                    RECONCILE_WAIT.as_secs()
                ),
            });
        }
        // NULL: the lock's wait failed (killed, or out of memory).
        other => return Err(CounterError::unexpected_answer(format!("GET_LOCK answered {other:?}"), None)),
    }
    let outcome = reconcile_locked(mode, conn, call).await;
    let release = text(format!("DO RELEASE_LOCK({LOCK_NAME})"), vec![Param::Text(call.totals_view)]);
    // A broken connection has released it already.
    let _ = conn.execute(&release).await;
    outcome
}

/// Refuses a reconcile that could not count what it names.
fn check(reconcile: &Reconcile<'_>) -> Result<(), CounterError> {
    match (reconcile.keys, reconcile.set) {
        (Some(_), Some(_)) => Err(CounterError::invalid_argument(
            "a reconcile of a range of keys cannot name a set, whose members have no key: \
             count every key of the range, zeros included, from the parent table (FROM posts LEFT JOIN ...)"
                .to_owned(),
        )),
        (Some((first, last)), None) if first > last => Err(CounterError::invalid_argument(format!(
            "the range of keys {first}..={last} holds no key: its first key is past its last"
        ))),
        (keys, _) => match (placeholders(reconcile.source), keys) {
            (2, Some(_)) | (0, None) => Ok(()),
            (taken, Some(_)) => Err(CounterError::invalid_argument(format!(
                "the reconcile's query takes {taken} parameters (?), and a range of keys gives it two: \
                 the range's first and last key (... WHERE post_id BETWEEN ? AND ?)"
            ))),
            (taken, None) => Err(CounterError::invalid_argument(format!(
                "the reconcile's query takes {taken} parameters (?): give it a range of keys, \
                 whose first and last key are its two"
            ))),
        },
    }
}

/// Refuses to correct on a read-only server, a replica most often: its
/// corrections would fail, or, from an account that may write there
/// anyway, make the replica differ from its primary. A reconcile reads and
/// corrects on one server, the primary; a dry run may read a replica.
async fn refuse_a_read_only_server(conn: &mut impl Connection) -> Result<(), CounterError> {
    let read_only = conn.rows(&text("SELECT @@GLOBAL.read_only", Vec::new())).await?;
    if read_only.first().and_then(|row| row.first().copied().flatten()).is_some_and(|value| value != 0) {
        return Err(CounterError::ReadOnly {
            message: "this server is read-only (a replica?): a reconcile reads and corrects on the primary; \
                      a dry run may read a replica"
                .to_owned(),
        });
    }
    Ok(())
}

/// On a Galera node, the session's `wsrep_sync_wait`, which the snapshot
/// sets to 1 while it starts: its START TRANSACTION then waits until the
/// node has applied every writeset the cluster committed before it, so that
/// the snapshot holds every write committed anywhere before it started.
/// `None` elsewhere (MySQL has no such variable).
async fn galera_sync_wait(conn: &mut impl Connection) -> Result<Option<i64>, CounterError> {
    let show = text("SHOW VARIABLES WHERE Variable_name IN ('wsrep_on', 'wsrep_sync_wait')", Vec::new());
    let variables: BTreeMap<String, String> = conn
        .texts(&show)
        .await?
        .into_iter()
        .filter_map(|row| match &row[..] {
            [Some(name), Some(value)] => Some((name.to_ascii_lowercase(), value.clone())),
            _ => None,
        })
        .collect();
    if variables.get("wsrep_on").map(String::as_str) != Some("ON") {
        return Ok(None);
    }
    Ok(variables.get("wsrep_sync_wait").and_then(|value| value.parse().ok()))
}

/// Starts the read-only snapshot the counts are read in, under REPEATABLE
/// READ whatever the session's level, and without `READ ONLY` on an engine
/// that refuses the statement: TiDB does not parse the pair (1064) and
/// takes `READ ONLY` for a no-op (1235). The transaction only reads either
/// way.
async fn start_snapshot(conn: &mut impl Connection) -> Result<u64, CounterError> {
    const SNAPSHOT: &str = "START TRANSACTION WITH CONSISTENT SNAPSHOT";
    // Right before each start: it sets the next transaction only.
    let repeatable_read = text("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", Vec::new());
    conn.execute(&repeatable_read).await?;
    match conn.execute(&text(format!("{SNAPSHOT}, READ ONLY"), Vec::new())).await {
        Err(error)
            if matches!(error.code(), Some(server_errno::PARSE_ERROR | server_errno::NOT_SUPPORTED_YET)) =>
        {
            conn.execute(&repeatable_read).await?;
            conn.execute(&text(SNAPSHOT, Vec::new())).await
        }
        started => started,
    }
}

/// Reads every count in one snapshot, then corrects each drift.
async fn reconcile_locked(
    mode: &Mode,
    conn: &mut impl Connection,
    call: ReconcileCall<'_>,
) -> Result<Vec<Drift>, CounterError> {
    let sync_wait = galera_sync_wait(conn).await?;
    if sync_wait.is_some() {
        conn.execute(&text("SET SESSION wsrep_sync_wait = 1", Vec::new())).await?;
    }
    let started = start_snapshot(conn).await;
    if let Some(before) = &sync_wait {
        let restore = text("SET SESSION wsrep_sync_wait = ?", vec![Param::Number(Some(*before))]);
        conn.execute(&restore).await?;
    }
    started?;
    let read = read_snapshot(mode, conn, call).await;
    let end = if read.is_ok() { "COMMIT" } else { "ROLLBACK" };
    let ended = conn.execute(&text(end, Vec::new())).await;
    let mut drifts = read?;
    ended?;
    for drift in &mut drifts {
        drift.correction = match (drift.counted, drift.drift()) {
            (None, _) => Correction::NoCounter,
            (_, Some(0)) => Correction::NoDrift,
            _ if call.reconcile.dry_run => Correction::DryRun,
            (_, Some(delta)) => {
                let id = correction_id(call.id, &drift.name);
                let add = Call::AddOnce { id: &id, name: &drift.name, delta };
                match mode.run(conn, add, Owner::Client).await {
                    Ok(_) => Correction::Added,
                    Err(refused @ (CounterError::PastBound { .. } | CounterError::PastLimit { .. })) => {
                        Correction::Refused(refused.to_string())
                    }
                    Err(error) => return Err(error),
                }
            }
            (_, None) => Correction::Refused(format!(
                "the drift from {} to {} passes a BIGINT",
                drift.counted.unwrap_or_default(),
                drift.source
            )),
        };
    }
    Ok(drifts)
}

/// The source's counts, the set's members it has no row for, and every
/// counter's value, in the snapshot the transaction on `conn` holds.
async fn read_snapshot(
    mode: &Mode,
    conn: &mut impl Connection,
    call: ReconcileCall<'_>,
) -> Result<Vec<Drift>, CounterError> {
    let mut sources = BTreeMap::new();
    let keys = match call.reconcile.keys {
        Some((first, last)) => vec![Param::Number(Some(first)), Param::Number(Some(last))],
        None => Vec::new(),
    };
    for row in conn.texts(&text(call.reconcile.source, keys)).await? {
        let (name, source) = source_row(&row)?;
        if sources.insert(name.clone(), source).is_some() {
            return Err(CounterError::invalid_argument(format!(
                "the reconcile's query returned counter {} twice",
                slotted_counters_core::refusals::quoted(&name)
            )));
        }
    }
    if let Some(prefix) = call.reconcile.set {
        let pattern: String = prefix
            .chars()
            .flat_map(|character| match character {
                '!' | '%' | '_' => vec!['!', character],
                character => vec![character],
            })
            .chain(['%'])
            .collect();
        // GROUP BY, not DISTINCT: through Vitess v0.24.4's vtgate, over two
        // shards, DISTINCT answered one name of ten where GROUP BY answered
        // all ten (both scatter).
        let members = text(
            format!(
                "SELECT `counter_name` FROM `{}` WHERE `counter_name` LIKE ? ESCAPE '!' GROUP BY `counter_name`",
                call.table
            ),
            vec![Param::Text(&pattern)],
        );
        for row in conn.texts(&members).await? {
            if let Some(Some(name)) = row.into_iter().next() {
                sources.entry(name).or_insert(0);
            }
        }
    }
    let names: Vec<String> = sources.keys().cloned().collect();
    let mut counted = Vec::with_capacity(names.len());
    for batch in names.chunks(READ_BATCH) {
        match mode.run(conn, Call::GetMany { names: batch }, Owner::Caller).await? {
            Answer::Values(values) => counted.extend(values),
            other => return Err(CounterError::unexpected_answer(format!("{other:?} for values"), None)),
        }
    }
    Ok(sources
        .into_iter()
        .zip(counted)
        .map(|((name, source), counted)| Drift { name, source, counted, correction: Correction::NoDrift })
        .collect())
}

/// A row of the source query: a counter's name and its source's count.
fn source_row(row: &[Option<String>]) -> Result<(String, i64), CounterError> {
    let shown = || format!("{row:?}");
    match row {
        [Some(name), Some(count)] => match count.trim().parse::<i64>() {
            Ok(count) => Ok((name.clone(), count)),
            Err(_) => Err(CounterError::invalid_argument(format!(
                "the reconcile's query must return a whole number as a counter's count (CAST(... AS SIGNED)), not {}",
                shown()
            ))),
        },
        _ => Err(CounterError::invalid_argument(format!(
            "the reconcile's query must return rows of two columns, a counter's name and its count, neither NULL, not {}",
            shown()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU64;

    use slotted_counters_core::PackageOptions;

    use super::*;
    use crate::driver::ready;
    use crate::error::ErrorKind;
    use crate::scripted::{Reply, ScriptedConnection, answer};

    #[test]
    fn each_counter_corrects_under_an_id_of_its_own_kept_through_the_retries() {
        let id = [7; 16];
        assert_eq!(correction_id(&id, "a"), correction_id(&id, "a"));
        assert_ne!(correction_id(&id, "a"), correction_id(&id, "b"));
        assert_ne!(correction_id(&id, "a"), correction_id(&[8; 16], "a"));
    }

    #[test]
    fn ranges_cover_the_keys_once_in_order_and_in_batches() {
        let batch = |size| NonZeroU64::new(size).unwrap();
        let keys = |reconcile: Reconcile<'_>| reconcile.key_range().unwrap();
        let ranges: Vec<_> = Reconcile::query("q").ranges(1..=10, batch(4)).map(keys).collect();
        assert_eq!(ranges, [1..=4, 5..=8, 9..=10]);
        let single: Vec<_> = Reconcile::query("q").ranges(-3..=-3, batch(100)).map(keys).collect();
        assert_eq!(single, [-3..=-3]);
        // A first key past the last, as a caller's variables may give it.
        let (first, last) = (5, 4);
        assert_eq!(Reconcile::query("q").ranges(first..=last, batch(1)).count(), 0);
        let edge: Vec<_> =
            Reconcile::query("q").ranges(i64::MAX - 2..=i64::MAX, batch(2)).map(keys).collect();
        assert_eq!(edge, [i64::MAX - 2..=i64::MAX - 1, i64::MAX..=i64::MAX]);
        let wide = Reconcile::query("q").ranges(i64::MIN..=i64::MAX, batch(u64::MAX));
        assert_eq!(wide.map(keys).collect::<Vec<_>>(), [i64::MIN..=i64::MAX - 1, i64::MAX..=i64::MAX]);
    }

    #[test]
    fn a_range_refuses_a_set_a_first_key_past_its_last_and_a_query_without_its_two_parameters() {
        let ranged = "SELECT p, COUNT(*) FROM t WHERE p BETWEEN ? AND ? GROUP BY p";
        assert!(check(&Reconcile::query(ranged).keys(1..=2)).is_ok());
        assert!(check(&Reconcile::query(ranged).keys(1..=2).set("p:")).is_err());
        let (first, last) = (2, 1);
        assert!(check(&Reconcile::query(ranged).keys(first..=last)).is_err());
        assert!(check(&Reconcile::query(ranged)).is_err());
        assert!(check(&Reconcile::query("SELECT p, COUNT(*) FROM t GROUP BY p").keys(1..=2)).is_err());
    }

    fn reconcile_on(replies: Vec<Reply>, dry_run: bool) -> Result<Vec<Drift>, CounterError> {
        let mode = Mode::routines(&PackageOptions::default());
        let mut conn = ScriptedConnection::new(replies);
        let reconcile = Reconcile::query("SELECT p, COUNT(*) FROM t GROUP BY p");
        let reconcile = if dry_run { reconcile.dry_run() } else { reconcile };
        let call =
            ReconcileCall { reconcile, table: "counters", totals_view: "counter_totals", id: &[0; 16] };
        ready(run(&mode, &mut conn, call))
    }

    #[test]
    fn a_reconcile_on_a_read_only_server_or_behind_another_fails_with_its_own_kind() {
        let read_only = answer("SELECT @@GLOBAL.read_only", Reply::Rows(vec![vec![Some(1)]]));
        let refused = reconcile_on(vec![read_only], false).unwrap_err();
        assert_eq!(refused.kind(), ErrorKind::ReadOnly, "{refused:?}");
        let writable = answer("SELECT @@GLOBAL.read_only", Reply::Rows(vec![vec![Some(0)]]));
        let lock = format!("SELECT GET_LOCK({LOCK_NAME}, ?)");
        let busy = reconcile_on(vec![writable, answer(&lock, Reply::Rows(vec![vec![Some(0)]]))], false);
        assert_eq!(busy.unwrap_err().kind(), ErrorKind::Busy);
        let dry_run_busy = reconcile_on(vec![answer(&lock, Reply::Rows(vec![vec![Some(0)]]))], true);
        assert_eq!(dry_run_busy.unwrap_err().kind(), ErrorKind::Busy, "a dry run reads a read-only server");
        let failed_lock = reconcile_on(vec![answer(&lock, Reply::Rows(vec![vec![None]]))], true);
        assert_eq!(failed_lock.unwrap_err().kind(), ErrorKind::UnexpectedAnswer, "GET_LOCK's NULL: an error");
    }

    #[test]
    fn a_snapshot_the_engine_will_not_start_read_only_starts_without_it() {
        let snapshot = "START TRANSACTION WITH CONSISTENT SNAPSHOT";
        let read_only = format!("{snapshot}, READ ONLY");
        let repeatable_read = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ";
        let level = || answer(repeatable_read, Reply::Changed(0));
        let start = |replies: Vec<Reply>| {
            let mut conn = ScriptedConnection::new(replies);
            let started = ready(start_snapshot(&mut conn));
            (started, conn.sent().into_iter().map(|sent| sent.sql).collect::<Vec<_>>())
        };
        for refusal in [server_errno::PARSE_ERROR, server_errno::NOT_SUPPORTED_YET] {
            let (started, sent) = start(vec![
                level(),
                answer(&read_only, Reply::Error(refusal)),
                level(),
                answer(snapshot, Reply::Changed(0)),
            ]);
            assert!(started.is_ok(), "after {refusal}: {started:?}");
            assert_eq!(
                sent,
                [repeatable_read, read_only.as_str(), repeatable_read, snapshot],
                "after {refusal}"
            );
        }
        let (started, sent) = start(vec![level(), answer(&read_only, Reply::Changed(0))]);
        assert!(
            started.is_ok() && sent == [repeatable_read, read_only.as_str()],
            "MySQL and MariaDB start it read-only"
        );
        let (started, sent) =
            start(vec![level(), answer(&read_only, Reply::Error(server_errno::LOCK_WAIT_TIMEOUT))]);
        assert_eq!(started.unwrap_err().code(), Some(server_errno::LOCK_WAIT_TIMEOUT), "{sent:?}");
    }

    #[test]
    fn a_source_row_is_a_name_and_a_whole_number() {
        let row =
            |name: Option<&str>, count: Option<&str>| vec![name.map(str::to_owned), count.map(str::to_owned)];
        assert_eq!(source_row(&row(Some("post:1"), Some("12"))).unwrap(), ("post:1".to_owned(), 12));
        for bad in [row(Some("post:1"), Some("1.5")), row(None, Some("1")), row(Some("a"), None), vec![None]]
        {
            assert!(matches!(source_row(&bad), Err(CounterError::InvalidArgument { .. })), "{bad:?}");
        }
    }
}
