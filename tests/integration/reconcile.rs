//! Recounting counters from their source of truth while writes go on: a
//! source table of comments, one counter per post kept in the same
//! transactions as its rows, drifts injected beside them, and reconciles
//! through every client and the command line.

use std::io::{BufRead, BufReader};
use std::num::NonZeroU64;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use mysql::PooledConn;
use mysql::prelude::Queryable;
use slotted_counters::sqlx::mysql::MySqlPoolOptions;
use slotted_counters::{
    AsyncCounters, Correction, CounterError, Counters, Drift, NewCounter, PackageOptions, Reconcile,
    RetryBudget,
};

use crate::support::fault_proxy::FaultProxy;
use crate::support::multi_primary::{self, MultiPrimary};
use crate::support::{
    self, Database, StopOnDrop, client_error, on_each_server, server_error, slotted_counters, stderr, stdout,
    succeeded, total,
};

on_each_server!(
    reconciles_under_writes_leave_every_counter_equal_to_its_source,
    the_plain_mode_reconciles_under_writes_too,
    a_dry_run_changes_nothing_and_reports_every_drift,
    a_set_corrects_counters_without_source_rows_and_refuses_past_a_bound,
    a_correction_past_a_day_limit_is_refused_and_one_within_counts_in_today,
    two_reconciles_at_once_add_a_drift_once,
    reconciles_ride_through_re_installs_and_correct_each_drift_once,
    reconciles_through_cut_connections_neither_lose_nor_double_a_correction,
    the_command_reconciles_and_reports_what_drifted,
    the_command_refuses_bad_ranges_and_stops_where_a_range_fails,
    a_large_source_reconciles_in_ranges_stopped_once_and_resumed,
    the_documented_sql_sequence_corrects_a_drift,
    a_source_counted_in_unsigned_boolean_or_double_columns_reads_alike_in_both_clients,
);

/// The posts, each counted by counter `comments:<post>`.
pub(crate) const POSTS: i64 = 10;

/// The query that counts each post's comments.
pub(crate) const SOURCE: &str =
    "SELECT CONCAT('comments:', post_id), COUNT(*) FROM comments GROUP BY post_id";

/// The query that counts the comments of the posts of a range of their
/// ids, zeros included, as a reconcile in ranges runs it.
const RANGED_SOURCE: &str = "SELECT CONCAT('comments:', p.id), COUNT(c.id) FROM posts p \
     LEFT JOIN comments c ON c.post_id = p.id WHERE p.id BETWEEN ? AND ? GROUP BY p.id";

/// The default package, a table of posts, one of their comments and a
/// counter per post.
fn with_comments() -> Database {
    let db = support::with_package(&PackageOptions::default());
    let counters = Counters::new(db.pool().clone()).unwrap();
    add_comments(&db, &counters);
    db
}

/// The tables of posts and their comments that the counters count. A
/// comment names the counter that counts it: a sharded engine keeps it on
/// that counter's shard (`support::engines`), so that a writer's
/// transaction, and a reconcile's snapshot of a post, stays on one shard.
pub(crate) const SOURCE_TABLES: [&str; 2] = [
    "CREATE TABLE posts (id INT PRIMARY KEY)",
    "CREATE TABLE comments (id BIGINT AUTO_INCREMENT PRIMARY KEY, post_id INT NOT NULL, \
     counter_name VARCHAR(128) NOT NULL DEFAULT '', KEY (post_id))",
];

/// The tables of posts and comments in `db`, and a counter of 8 slots per
/// post, set up through `counters`.
fn add_comments(db: &Database, counters: &Counters) {
    let mut conn = db.conn();
    support::server::run_each(&mut conn, &SOURCE_TABLES).unwrap();
    add_posts(&mut conn, counters);
}

/// The posts, in [`SOURCE_TABLES`], and a counter of 8 slots for each, set
/// up through `counters`.
pub(crate) fn add_posts(conn: &mut impl Queryable, counters: &Counters) {
    for post in 0..POSTS {
        conn.exec_drop("INSERT INTO posts (id) VALUES (?)", (post,)).unwrap();
        counters.setup(&format!("comments:{post}"), NewCounter::new("comments").slots(8)).unwrap();
    }
}

/// Each post's comments and its counter (the sum of its slots, which reads
/// the same with routines or without), which a test expects equal.
fn sources_and_counters(conn: &mut impl Queryable) -> Vec<(i64, i64)> {
    (0..POSTS)
        .map(|post| {
            conn.exec_first(
                "SELECT (SELECT COUNT(*) FROM comments WHERE post_id = ?), \
                        (SELECT CAST(SUM(counter) AS SIGNED) FROM counters WHERE counter_name = ?)",
                (post, format!("comments:{post}")),
            )
            .unwrap()
            .unwrap()
        })
        .collect()
}

/// What one writer's transaction does to a post.
#[derive(Clone, Copy)]
pub(crate) enum Change {
    /// A comment and its increment, in one transaction.
    Comment,
    /// A comment's delete and its decrement, in one transaction.
    Uncomment,
    /// A drift: a comment without its increment.
    CommentOnly,
    /// A drift: an increment without its comment.
    IncrementOnly,
}

/// How the writers write their counters, in their own transactions.
#[derive(Clone, Copy)]
pub(crate) enum Writes<'a> {
    /// `CALL counter_increment`, and `counter_add` to take one back.
    Routines,
    /// The plain mode of `counters`, on the writer's connection.
    Plain(&'a Counters),
}

impl Writes<'_> {
    /// Adds 1 to counter `name` on `conn`; a failure as the server's error
    /// number and message.
    fn increment(self, conn: &mut impl Queryable, name: &str) -> Result<(), (u16, String)> {
        match self {
            Writes::Routines => conn.exec_drop("CALL counter_increment(?)", (name,)).map_err(server_error),
            Writes::Plain(counters) => counters.on(conn).increment(name).map_err(client_error),
        }
    }

    /// Takes 1 from counter `name` on `conn`, as [`Writes::increment`] adds it.
    fn decrement(self, conn: &mut impl Queryable, name: &str) -> Result<(), (u16, String)> {
        match self {
            Writes::Routines => conn.exec_drop("CALL counter_add(?, -1)", (name,)).map_err(server_error),
            Writes::Plain(counters) => counters.on(conn).add(name, -1).map_err(client_error),
        }
    }
}

/// Runs `change` on `post` in one transaction, its counter written as
/// `writes` says, again after a deadlock (or a lost certification, on a
/// cluster).
pub(crate) fn apply(conn: &mut impl Queryable, writes: Writes, change: Change, post: i64) {
    let name = format!("comments:{post}");
    loop {
        let done = (|| -> Result<(), (u16, String)> {
            conn.query_drop("START TRANSACTION").map_err(server_error)?;
            match change {
                Change::Comment | Change::CommentOnly => {
                    conn.exec_drop(
                        "INSERT INTO comments (post_id, counter_name) VALUES (?, ?)",
                        (post, &name),
                    )
                    .map_err(server_error)?;
                }
                Change::Uncomment => {
                    // By the counter's name too, which a sharded engine
                    // routes by.
                    let id: Option<i64> = conn
                        .exec_first(
                            "SELECT id FROM comments WHERE post_id = ? AND counter_name = ? \
                             ORDER BY id LIMIT 1 FOR UPDATE",
                            (post, &name),
                        )
                        .map_err(server_error)?;
                    if let Some(id) = id {
                        conn.exec_drop("DELETE FROM comments WHERE counter_name = ? AND id = ?", (&name, id))
                            .map_err(server_error)?;
                        writes.decrement(conn, &name)?;
                    }
                }
                Change::IncrementOnly => {}
            }
            if let Change::Comment | Change::IncrementOnly = change {
                writes.increment(conn, &name)?;
            }
            conn.query_drop("COMMIT").map_err(server_error)
        })();
        match done {
            Ok(()) => return,
            Err(error) => {
                // A deadlock, or a certification lost on Galera, has
                // rolled the transaction back already.
                let _ = conn.query_drop("ROLLBACK");
                match error {
                    // A deadlock; a certification lost on Galera (1213,
                    // or 1020 at a read) or on Group Replication (3101, or
                    // 1180 at COMMIT, whose storage engine error 149 is a
                    // deadlock).
                    (1213 | 1020 | 3101, _) => continue,
                    (1180, message) if message.contains("Lock deadlock") => continue,
                    (code, message) => panic!("a writer failed: {code} {message}"),
                }
            }
        }
    }
}

/// 16 writers comment and uncomment, each change with its counter in one
/// transaction (written as `writes` says), and inject drifts while
/// `drifting`; `reconcile` (of the set
/// of every post's counter, a post without comments among them) runs 10
/// times meanwhile, the last ones after the drifts stopped, with writers
/// still writing. Then every counter equals its source, with no reconcile
/// after the writers stopped.
pub(crate) fn under_writes(pool: &mysql::Pool, writes: Writes, reconcile: impl Fn() -> Vec<Drift> + Sync) {
    let running = AtomicBool::new(true);
    let drifting = AtomicBool::new(true);
    let (changes, corrected) = (AtomicU64::new(0), AtomicU64::new(0));
    thread::scope(|scope| {
        for writer in 0..16_u64 {
            let (running, drifting, changes) = (&running, &drifting, &changes);
            let mut conn = pool.get_conn().unwrap();
            scope.spawn(move || {
                let mut n = writer;
                while running.load(Ordering::SeqCst) {
                    let change = match n % 10 {
                        0 if drifting.load(Ordering::SeqCst) => Change::CommentOnly,
                        1 if drifting.load(Ordering::SeqCst) => Change::IncrementOnly,
                        0..=5 => Change::Comment,
                        _ => Change::Uncomment,
                    };
                    apply(&mut conn, writes, change, (n * 7 + writer) as i64 % POSTS);
                    changes.fetch_add(1, Ordering::SeqCst);
                    n += 1;
                }
            });
        }
        // A failed reconcile stops the writers, or the scope would wait for them.
        let stop = StopOnDrop(&running);
        for round in 0..10 {
            if round == 6 {
                drifting.store(false, Ordering::SeqCst);
            }
            thread::sleep(Duration::from_millis(150));
            let drifts = reconcile();
            assert_eq!(drifts.len() as i64, POSTS, "{drifts:?}");
            let added = drifts.iter().filter(|drift| drift.correction == Correction::Added).count();
            corrected.fetch_add(added as u64, Ordering::SeqCst);
        }
        drop(stop);
    });
    assert!(changes.load(Ordering::SeqCst) > 500, "the writers wrote during the reconciles");
    assert!(corrected.load(Ordering::SeqCst) > 0, "some reconcile corrected a drift");
    let pairs = sources_and_counters(&mut pool.get_conn().unwrap());
    assert!(pairs.iter().all(|(comments, counted)| comments == counted), "{pairs:?}");
}

fn reconciles_under_writes_leave_every_counter_equal_to_its_source() {
    let db = with_comments();
    let counters = Counters::new(db.pool().clone()).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let async_counters = runtime.block_on(async {
        let pool = MySqlPoolOptions::new().connect(&db.url()).await.unwrap();
        AsyncCounters::new(pool).unwrap()
    });
    let round = AtomicU64::new(0);
    under_writes(db.pool(), Writes::Routines, || {
        let reconcile = Reconcile::query(SOURCE).set("comments:");
        match round.fetch_add(1, Ordering::SeqCst) % 3 {
            0 => counters.reconcile(reconcile).unwrap(),
            1 => runtime.block_on(async_counters.reconcile(reconcile)).unwrap(),
            _ => Reconcile::query(RANGED_SOURCE)
                .ranges(0..=POSTS - 1, NonZeroU64::new(3).unwrap())
                .flat_map(|range| counters.reconcile(range).unwrap())
                .collect(),
        }
    });
}

/// The plain mode, on a database with no routine whose account may run
/// none, as on an engine without stored routines: the writers write
/// through it too, and the reconciler's pool runs READ COMMITTED, as many
/// applications' do: the reconcile's snapshot is REPEATABLE READ whatever
/// the session's level. The command's `--plain-sql` corrects a drift there
/// too.
fn the_plain_mode_reconciles_under_writes_too() {
    let options = PackageOptions::default();
    let (db, url) = support::plain_database(&options);
    let read_committed = mysql::OptsBuilder::from_opts(mysql::Opts::from_url(&url).unwrap())
        .init(vec!["SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"]);
    let plain = Counters::builder(mysql::Pool::new(read_committed).unwrap())
        .package(&options)
        .plain_sql()
        .build()
        .unwrap();
    add_comments(&db, &plain);
    under_writes(db.pool(), Writes::Plain(&plain), || {
        plain.reconcile(Reconcile::query(SOURCE).set("comments:")).unwrap()
    });

    db.conn().query_drop("INSERT INTO comments (post_id) VALUES (3)").unwrap();
    let args = ["reconcile", "--plain-sql", "--url", &url, "--query", SOURCE, "--set", "comments:"];
    let done = stdout(&succeeded(slotted_counters(&args)));
    assert!(done.ends_with(&format!("{POSTS} counters read, 1 drifted, 1 corrected\n")), "{done}");
    let pairs = sources_and_counters(&mut db.conn());
    assert!(pairs.iter().all(|(comments, counted)| comments == counted), "{pairs:?}");
}

/// Comments inserted without their increments: a dry run reports each
/// drift and leaves every slot as it was.
fn a_dry_run_changes_nothing_and_reports_every_drift() {
    let db = with_comments();
    let mut conn = db.conn();
    conn.query_drop("INSERT INTO comments (post_id) VALUES (1), (1), (2)").unwrap();
    conn.query_drop("CALL counter_add('comments:3', 4)").unwrap();
    let before = support::table(&mut conn);
    let counters = Counters::new(db.pool().clone()).unwrap();
    let drifts = counters.reconcile(Reconcile::query(SOURCE).set("comments:").dry_run()).unwrap();
    assert_eq!(support::table(&mut conn), before, "a dry run changed a slot");
    let drifted: Vec<(String, Option<i64>, Correction)> = drifts
        .iter()
        .filter(|drift| drift.correction != Correction::NoDrift)
        .map(|drift| (drift.name.clone(), drift.drift(), drift.correction.clone()))
        .collect();
    assert_eq!(
        drifted,
        [
            ("comments:1".to_owned(), Some(2), Correction::DryRun),
            ("comments:2".to_owned(), Some(1), Correction::DryRun),
            ("comments:3".to_owned(), Some(-4), Correction::DryRun),
        ]
    );
}

/// A set names the counters the query counts: one it has no row for is
/// corrected to 0, one outside it is left alone, a name without a counter
/// is reported, and a correction past a bound is refused and reported,
/// never forced.
fn a_set_corrects_counters_without_source_rows_and_refuses_past_a_bound() {
    let db = with_comments();
    let mut conn = db.conn();
    conn.query_drop(
        "CALL counter_add('comments:4', 3); CALL counter_setup('other', 'd', 2, 9); \
         CALL counter_setup('stock:1', 'd', 2, 2); CALL counter_bound('stock:1', 0, 5); \
         CREATE TABLE stock (item VARCHAR(20), units INT)",
    )
    .unwrap();
    conn.query_drop("INSERT INTO stock VALUES ('1', 8), ('2', 1)").unwrap();
    let counters = Counters::new(db.pool().clone()).unwrap();
    let drifts = counters.reconcile(Reconcile::query(SOURCE).set("comments:")).unwrap();
    assert_eq!(drifts.len() as i64, POSTS);
    let four = drifts.iter().find(|drift| drift.name == "comments:4").unwrap();
    assert_eq!((four.source, four.counted, &four.correction), (0, Some(3), &Correction::Added));
    assert_eq!(total(&mut conn, "comments:4"), Some(0));
    assert_eq!(total(&mut conn, "other"), Some(9), "outside the set");

    let stock = "SELECT CONCAT('stock:', item), units FROM stock";
    let drifts = counters.reconcile(Reconcile::query(stock)).unwrap();
    match &drifts[..] {
        [one, two] => {
            assert_eq!((one.name.as_str(), one.drift()), ("stock:1", Some(6)));
            assert!(
                matches!(&one.correction, Correction::Refused(why) if why.starts_with("the write would pass the ceiling 5")),
                "{one:?}"
            );
            assert_eq!(
                (two.name.as_str(), two.counted, &two.correction),
                ("stock:2", None, &Correction::NoCounter)
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(total(&mut conn, "stock:1"), Some(2), "a refused correction changes nothing");

    let (first, last) = (3, 0);
    let past_the_last = first..=last;
    for (reconcile, words) in [
        (Reconcile::query("SELECT 'a'"), "rows of two columns"),
        (Reconcile::query("SELECT 'comments:1', 1.5"), "a whole number"),
        (Reconcile::query("SELECT 'comments:1', 1 UNION ALL SELECT 'comments:1', 2"), "twice"),
        (Reconcile::query(RANGED_SOURCE).keys(0..=3).set("comments:"), "cannot name a set"),
        (Reconcile::query(RANGED_SOURCE).keys(past_the_last), "holds no key"),
    ] {
        match counters.reconcile(reconcile) {
            Err(CounterError::InvalidArgument { message, .. }) => {
                assert!(message.contains(words), "{message}")
            }
            other => panic!("{reconcile:?}: {other:?}"),
        }
    }
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let async_counters = runtime.block_on(async {
        let pool = MySqlPoolOptions::new().connect(&db.url()).await.unwrap();
        AsyncCounters::new(pool).unwrap()
    });
    // The drivers differ here: sqlx would send a query parameters it does
    // not take, and the server would ignore them.
    for reconcile in [Reconcile::query(RANGED_SOURCE), Reconcile::query(SOURCE).keys(0..=3)] {
        for refused in [counters.reconcile(reconcile), runtime.block_on(async_counters.reconcile(reconcile))]
        {
            match refused {
                Err(CounterError::InvalidArgument { message, .. }) => {
                    assert!(
                        message.contains("takes 2 parameters") || message.contains("takes 0 parameters"),
                        "{message}"
                    );
                }
                other => panic!("{reconcile:?}: {other:?}"),
            }
        }
    }
}

/// A counter with a day limit of 5 that counted 3 today: a correction to
/// 10 is refused with the limit's message and changes nothing; one to 4
/// counts in today's bucket, as every write does. Through the routines and
/// the plain mode alike.
fn a_correction_past_a_day_limit_is_refused_and_one_within_counts_in_today() {
    let db = with_comments();
    let mut conn = db.conn();
    let routines = Counters::new(db.pool().clone()).unwrap();
    let plain =
        Counters::builder(db.pool().clone()).package(&PackageOptions::default()).plain_sql().build().unwrap();
    for (post, counters) in [(1, &routines), (2, &plain)] {
        let name = format!("comments:{post}");
        conn.exec_drop("CALL counter_limit(?, 'day', '5')", (&name,)).unwrap();
        conn.exec_drop("CALL counter_add(?, 3)", (&name,)).unwrap();
        let today = |conn: &mut PooledConn| -> Option<i64> {
            conn.exec_first("SELECT counter_get_period(?, 'day', UTC_TIMESTAMP())", (&name,))
                .unwrap()
                .flatten()
        };
        let comments = vec![format!("({post})"); 10].join(", ");
        conn.query_drop(format!("INSERT INTO comments (post_id) VALUES {comments}")).unwrap();
        let query = format!(
            "SELECT CONCAT('comments:', post_id), COUNT(*) FROM comments WHERE post_id = {post} GROUP BY post_id"
        );
        match &counters.reconcile(Reconcile::query(&query)).unwrap()[..] {
            [drift] => {
                assert_eq!((drift.source, drift.counted), (10, Some(3)));
                assert!(
                    matches!(&drift.correction, Correction::Refused(why) if why.starts_with("the write would pass the day limit 5 (room left: 2")),
                    "{drift:?}"
                );
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            (total(&mut conn, &name), today(&mut conn)),
            (Some(3), Some(3)),
            "refused: nothing changed"
        );

        conn.exec_drop("DELETE FROM comments WHERE post_id = ? LIMIT 6", (post,)).unwrap();
        let drifts = counters.reconcile(Reconcile::query(&query)).unwrap();
        assert_eq!(drifts[0].correction, Correction::Added, "{drifts:?}");
        assert_eq!((total(&mut conn, &name), today(&mut conn)), (Some(4), Some(4)));
    }
}

/// Two reconciles at once, from two clients, of one drift: the second
/// waits for the first and finds nothing left to add.
fn two_reconciles_at_once_add_a_drift_once() {
    let db = with_comments();
    let mut conn = db.conn();
    let clients = [(); 2].map(|_| Counters::new(db.pool().clone()).unwrap());
    for round in 0..20 {
        conn.query_drop("INSERT INTO comments (post_id) VALUES (1), (1), (1)").unwrap();
        let added: usize = thread::scope(|scope| {
            let runs: Vec<_> = clients
                .iter()
                .map(|client| scope.spawn(move || client.reconcile(Reconcile::query(SOURCE)).unwrap()))
                .collect();
            runs.into_iter()
                .flat_map(|run| run.join().unwrap())
                .filter(|drift| drift.correction == Correction::Added)
                .count()
        });
        assert_eq!(added, 1, "round {round}: one of the two added the drift");
        assert_eq!(sources_and_counters(&mut conn)[1], (3 * (round + 1), 3 * (round + 1)), "round {round}");
    }
}

/// Reconciles through both clients while the package is installed again
/// and again: each rides through the moments a routine or a trigger is
/// missing, and each drift injected before it is corrected once. Checked
/// on the table itself, which a re-install keeps, not through
/// `counter_get`, which it replaces.
fn reconciles_ride_through_re_installs_and_correct_each_drift_once() {
    let db = with_comments();
    let mut conn = db.conn();
    let routines = Counters::new(db.pool().clone()).unwrap();
    let plain =
        Counters::builder(db.pool().clone()).package(&PackageOptions::default()).plain_sql().build().unwrap();
    let url = db.url();
    let (installing, installs) = (AtomicBool::new(true), AtomicU64::new(0));
    let rounds = thread::scope(|scope| {
        scope.spawn(|| {
            while installing.load(Ordering::SeqCst) {
                succeeded(slotted_counters(&["install", "--url", &url]));
                installs.fetch_add(1, Ordering::SeqCst);
            }
        });
        let stop = StopOnDrop(&installing);
        let mut round = 0;
        while installs.load(Ordering::SeqCst) < 5 {
            let post = round % POSTS;
            conn.exec_drop("INSERT INTO comments (post_id) VALUES (?), (?)", (post, post)).unwrap();
            let counters = if round % 2 == 0 { &routines } else { &plain };
            let drifts = counters.reconcile(Reconcile::query(SOURCE)).unwrap();
            let added = drifts.iter().filter(|drift| drift.correction == Correction::Added).count();
            assert_eq!(added, 1, "round {round}: {drifts:?}");
            let apart: Vec<(i64, i64, i64)> = conn
                .query(
                    "SELECT c.post_id, c.comments, CAST(SUM(t.counter) AS SIGNED) FROM \
                     (SELECT post_id, COUNT(*) AS comments FROM comments GROUP BY post_id) c \
                     JOIN counters t ON t.counter_name = CONCAT('comments:', c.post_id) \
                     GROUP BY c.post_id, c.comments HAVING SUM(t.counter) <> c.comments",
                )
                .unwrap();
            assert_eq!(apart, [], "round {round}: posts, comments and counters apart");
            round += 1;
        }
        drop(stop);
        round
    });
    assert!(rounds > 5, "reconciles ran between the re-installs: {rounds}");
}

/// Drifts corrected through a proxy that cuts connections: a correction
/// whose answer was lost is sent again under its id, or found in the next
/// snapshot, and is never counted twice nor lost.
fn reconciles_through_cut_connections_neither_lose_nor_double_a_correction() {
    let db = with_comments();
    let mut conn = db.conn();
    let proxy = FaultProxy::start(db.address(), 1.0 / 16.0);
    let counters = Counters::builder(proxy.pool(&db.url()))
        .retry(RetryBudget::Time(Duration::from_secs(30)))
        .build()
        .unwrap();
    for round in 0..30 {
        let post = round % POSTS;
        conn.exec_drop("INSERT INTO comments (post_id) VALUES (?), (?)", (post, post)).unwrap();
        conn.exec_drop("CALL counter_add(?, -1)", (format!("comments:{post}"),)).unwrap();
        let reconciled = (0..20).any(|_| counters.reconcile(Reconcile::query(SOURCE)).is_ok());
        assert!(reconciled, "round {round}: 20 reconciles failed through the proxy");
        let pairs = sources_and_counters(&mut conn);
        assert!(pairs.iter().all(|(comments, counted)| comments == counted), "round {round}: {pairs:?}");
    }
    assert!(proxy.cuts.answers_lost.load(Ordering::Relaxed) > 0, "{}", proxy.summary());
    println!("reconciles on {:?}: {}", support::release(), proxy.summary());
}

/// `reconcile` corrects and lists what drifted; `--dry-run` lists and
/// corrects nothing; a refused correction exits 1 naming it.
fn the_command_reconciles_and_reports_what_drifted() {
    let db = with_comments();
    let mut conn = db.conn();
    conn.query_drop("INSERT INTO comments (post_id) VALUES (5), (5)").unwrap();
    let url = db.url();
    assert!(documented_queries().contains(&SOURCE.to_owned()), "the docs' query is not the one run");
    let dry =
        stdout(&succeeded(slotted_counters(&["reconcile", "--url", &url, "--query", SOURCE, "--dry-run"])));
    assert!(dry.contains("comments:5") && dry.contains("not added (dry run)"), "{dry}");
    assert_eq!(total(&mut conn, "comments:5"), Some(0));
    let done = stdout(&succeeded(slotted_counters(&["reconcile", "--url", &url, "--query", SOURCE])));
    assert!(done.contains("added") && done.ends_with("1 counters read, 1 drifted, 1 corrected\n"), "{done}");
    assert_eq!(total(&mut conn, "comments:5"), Some(2));

    conn.query_drop("CALL counter_bound('comments:5', NULL, 2); INSERT INTO comments (post_id) VALUES (5)")
        .unwrap();
    let refused = slotted_counters(&["reconcile", "--url", &url, "--query", SOURCE]);
    assert_eq!(refused.status.code(), Some(1), "{}", stdout(&refused));
    assert!(stderr(&refused).contains("the write would pass the ceiling 2"), "{}", stderr(&refused));
    assert_eq!(total(&mut conn, "comments:5"), Some(2));
}

/// Ranges the command cannot run are refused with the option at fault; a
/// range whose query fails stops the run there, saying where, and leaves
/// the ranges before it done and the file pointing at it.
fn the_command_refuses_bad_ranges_and_stops_where_a_range_fails() {
    let db = with_comments();
    let mut conn = db.conn();
    let url = db.url();
    let dir = tempfile::tempdir().unwrap();
    let progress = dir.path().join("progress");
    let file = progress.to_str().unwrap();
    let command = |extra: &[&str]| {
        let mut args = vec!["reconcile", "--url", &url, "--query", RANGED_SOURCE];
        args.extend(extra);
        slotted_counters(&args)
    };
    for (extra, words) in [
        (&["--keys", "5..1"][..], "the first key, 5, is past the last, 1"),
        (&["--keys", "1-5"], "expected FIRST..LAST"),
        (&["--keys", "0..9", "--set", "comments:"], "cannot be used with"),
        (&["--keys", "0..9", "--batch-size", "0"], "--batch-size"),
        (&["--batch-size", "5"], "--keys"),
        (&["--resume", file], "--keys"),
    ] {
        let refused = command(extra);
        assert_eq!(refused.status.code(), Some(2), "{extra:?}: {}", stderr(&refused));
        assert!(stderr(&refused).contains(words), "{extra:?}: {}", stderr(&refused));
    }

    std::fs::write(&progress, "next 3\nquery SELECT 1\n").unwrap();
    let other = command(&["--keys", "0..9", "--resume", file]);
    assert_eq!(other.status.code(), Some(1));
    assert!(stderr(&other).contains("holds the progress of another query"), "{}", stderr(&other));
    assert_eq!(std::fs::read_to_string(&progress).unwrap(), "next 3\nquery SELECT 1\n", "the file is kept");
    std::fs::remove_file(&progress).unwrap();

    conn.query_drop("INSERT INTO comments (post_id) VALUES (1), (8)").unwrap();
    let failing =
        RANGED_SOURCE.replace("CONCAT('comments:', p.id)", "IF(p.id = 7, NULL, CONCAT('comments:', p.id))");
    let args = [
        "reconcile",
        "--url",
        &url,
        "--query",
        &failing,
        "--keys",
        "0..9",
        "--batch-size",
        "5",
        "--resume",
        file,
    ];
    let stopped = slotted_counters(&args);
    assert_eq!(stopped.status.code(), Some(1));
    let steps = stderr(&stopped);
    assert!(
        steps.starts_with("keys 0..4: 5 counters read, 1 drifted, 1 corrected; 50.0% of the keys done\n"),
        "{steps}"
    );
    assert!(
        steps.contains("the reconcile stopped in keys 5..9: ") && steps.contains("neither NULL"),
        "{steps}"
    );
    assert!(steps.contains("run the same command again to resume"), "{steps}");
    assert!(std::fs::read_to_string(&progress).unwrap().starts_with("next 5\n"));
    assert_eq!(sources_and_counters(&mut conn)[1], (1, 1));
    assert_eq!(sources_and_counters(&mut conn)[8], (1, 0), "not corrected: its range stopped");

    // A run killed after its last range, before it removed its file.
    std::fs::write(&progress, format!("next 10\nquery {RANGED_SOURCE}\n")).unwrap();
    let done = succeeded(command(&["--keys", "0..=9", "--resume", file]));
    assert!(stdout(&done).ends_with("0 counters read, 0 drifted, 0 corrected\n"), "{}", stdout(&done));
    assert!(!progress.exists(), "the finished run's file is removed");
    assert_eq!(sources_and_counters(&mut conn)[8], (1, 0));
}

/// The posts of the large source, each with 10 comments.
const LARGE_POSTS: i64 = 10_000;

/// `SELECT n` for every n in `0..10^digits`, without a recursive CTE's
/// depth limit, which MySQL and MariaDB set apart.
fn numbers(digits: u32) -> String {
    let digit = "(SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 \
         UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)";
    let sum: Vec<String> = (0..digits).map(|place| format!("{} * d{place}.d", 10_i64.pow(place))).collect();
    let from: Vec<String> = (0..digits).map(|place| format!("{digit} AS d{place}")).collect();
    format!("SELECT {} AS n FROM {}", sum.join(" + "), from.join(" CROSS JOIN "))
}

/// The posts whose counter differs from their comments: none once a
/// reconcile of every post is done.
fn large_drifts(conn: &mut PooledConn) -> Vec<(i64, i64, i64)> {
    conn.query(
        "SELECT p.id, COALESCE(c.comments, 0), t.total FROM posts p \
         LEFT JOIN (SELECT post_id, COUNT(*) AS comments FROM comments GROUP BY post_id) c ON c.post_id = p.id \
         JOIN counter_totals t ON t.counter_name = CONCAT('comments:', p.id) \
         WHERE t.total <> COALESCE(c.comments, 0) ORDER BY p.id",
    )
    .unwrap()
}

/// The session of this test's database that waits in `GET_LOCK` (state
/// `User lock` on both servers). Not found by its statement's text: MySQL
/// fails the read (3854) while a session's text holds a write id's bytes,
/// as the reconcile's corrections' do.
fn waiting_for_a_named_lock(conn: &mut PooledConn) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let waiting: Option<u64> = conn
            .query_first(
                "SELECT ID FROM information_schema.PROCESSLIST \
                 WHERE DB = DATABASE() AND ID <> CONNECTION_ID() AND STATE = 'User lock'",
            )
            .unwrap();
        if let Some(id) = waiting {
            return id;
        }
        assert!(Instant::now() < deadline, "no reconcile waited for the lock");
        thread::sleep(Duration::from_millis(20));
    }
}

/// 100,000 comments over 10,000 posts, 311 of whose counters drifted (a
/// comment without its increment, increments without comments, every
/// comment of a post deleted): `reconcile --keys` in ranges of 500 shows
/// each range on stderr. Killed while it waits for the package's lock of
/// reconciles, which a DBA's session holds as the docs spell it, it leaves
/// in its file the first range it did not finish; run again, it resumes
/// there, and every counter equals its source.
fn a_large_source_reconciles_in_ranges_stopped_once_and_resumed() {
    let db = support::with_package(&PackageOptions::default());
    let mut conn = db.conn();
    conn.query_drop(format!(
        "CREATE TABLE posts (id INT PRIMARY KEY); \
         CREATE TABLE comments (id BIGINT AUTO_INCREMENT PRIMARY KEY, post_id INT NOT NULL, KEY (post_id)); \
         INSERT INTO posts SELECT n + 1 FROM ({}) AS numbers; \
         INSERT INTO comments (post_id) SELECT n % {LARGE_POSTS} + 1 FROM ({}) AS numbers",
        numbers(4),
        numbers(5)
    ))
    .unwrap();
    // The counters as 10,000 setups with 10 in slot 1 would make them, in
    // one statement: the calls took seconds per server.
    conn.query_drop(
        "INSERT INTO counters (counter_name, counter_id, description, start_date, counter) \
         SELECT CONCAT('comments:', id), slot, 'comments', NOW(), IF(slot = 1, 10, 0) \
         FROM posts CROSS JOIN (SELECT 1 AS slot UNION ALL SELECT 2) AS slots",
    )
    .unwrap();
    conn.query_drop(
        "INSERT INTO comments (post_id) SELECT id FROM posts WHERE id <= 200; \
         DELETE FROM comments WHERE post_id >= 9990",
    )
    .unwrap();
    let increments: Vec<String> =
        (5001..=5100).map(|post| format!("CALL counter_add('comments:{post}', 2)")).collect();
    conn.query_drop(increments.join("; ")).unwrap();
    assert_eq!(large_drifts(&mut conn).len(), 311);
    assert!(documented_queries().contains(&RANGED_SOURCE.to_owned()), "the docs' query is not the one run");

    let dir = tempfile::tempdir().unwrap();
    let progress = dir.path().join("comments.progress");
    let url = db.url();
    let args = [
        "reconcile",
        "--url",
        &url,
        "--query",
        RANGED_SOURCE,
        "--keys",
        "1..10000",
        "--batch-size",
        "500",
        "--resume",
        progress.to_str().unwrap(),
    ];
    let mut run = Command::new(env!("CARGO_BIN_EXE_slotted-counters-under-test"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(run.stderr.take().unwrap()).lines();
    let mut shown = Vec::new();
    let mut dba = db.conn();
    while shown.len() < 2 {
        shown.push(lines.next().expect("a range's progress").unwrap());
    }
    let lock: i64 = dba
        .query_first(
            "SELECT GET_LOCK(CONCAT('slotted_counters:', \
             LEFT(SHA2(CONCAT(DATABASE(), '.', 'counter_totals'), 256), 40)), 60)",
        )
        .unwrap()
        .unwrap();
    assert_eq!(lock, 1);
    let waiting = waiting_for_a_named_lock(&mut dba);
    run.kill().unwrap();
    run.wait().unwrap();
    dba.query_drop(format!("KILL {waiting}")).unwrap();
    shown.extend(lines.map_while(Result::ok));
    dba.query_drop("DO RELEASE_LOCK(CONCAT('slotted_counters:', LEFT(SHA2(CONCAT(DATABASE(), '.', 'counter_totals'), 256), 40)))").unwrap();

    assert!(
        shown[0].starts_with("keys 1..500: 500 counters read, 200 drifted, 200 corrected; 5.0%"),
        "{shown:?}"
    );
    let last_done: i64 = shown
        .last()
        .unwrap()
        .strip_prefix("keys ")
        .and_then(|line| line.split_once(':'))
        .and_then(|(keys, _)| keys.split_once(".."))
        .and_then(|(_, last)| last.parse().ok())
        .unwrap_or_else(|| panic!("{shown:?}"));
    assert!(last_done < LARGE_POSTS, "the run stopped before its end: {shown:?}");
    let held = std::fs::read_to_string(&progress).unwrap();
    assert!(held.starts_with(&format!("next {}\n", last_done + 1)), "{held}");

    let resumed = succeeded(slotted_counters(&args));
    let (report, steps) = (stdout(&resumed), stderr(&resumed));
    assert!(
        steps.starts_with(&format!("resuming at key {}\nkeys {}..", last_done + 1, last_done + 1)),
        "{steps}"
    );
    assert!(
        steps.contains("keys 9501..10000: 500 counters read, 11 drifted, 11 corrected; 100.0%"),
        "{steps}"
    );
    assert!(report.contains("comments:9990") && report.contains("comments:5001"), "{report}");
    let summary = report.lines().last().unwrap_or_default();
    assert!(summary.starts_with(&format!("{} counters read, ", LARGE_POSTS - last_done)), "{report}");
    assert!(!progress.exists(), "a finished run removes its progress");
    assert_eq!(large_drifts(&mut conn), []);
}

/// The queries docs/operations.md passes `reconcile --query`, each on one
/// line, with single spaces.
fn documented_queries() -> Vec<String> {
    let page = std::fs::read_to_string(support::in_project("docs/operations.md")).unwrap();
    page.split("--query \"")
        .skip(1)
        .map(|rest| {
            rest[..rest.find('"').expect("the query's end")].split_whitespace().collect::<Vec<_>>().join(" ")
        })
        .collect()
}

/// The statements of docs/operations.md's reconcile "From SQL", the page's
/// own text.
fn documented_sql_sequence() -> Vec<String> {
    let page = std::fs::read_to_string(support::in_project("docs/operations.md")).unwrap();
    let section = &page[page.find("**From SQL.**").expect("the paragraph")..];
    let start = section.find("```sql\n").expect("an SQL block") + "```sql\n".len();
    let block = &section[start..start + section[start..].find("```").expect("the block's end")];
    block.split(';').map(str::trim).filter(|statement| !statement.is_empty()).map(str::to_owned).collect()
}

/// A DBA's sequence, as the docs write it: the snapshot's read shows the
/// drift of the post with 3 comments its counter missed, and the
/// correction it shows mends it.
fn the_documented_sql_sequence_corrects_a_drift() {
    let db = support::with_package(&PackageOptions::default());
    let mut conn = db.conn();
    conn.query_drop(
        "CREATE TABLE comments (id BIGINT AUTO_INCREMENT PRIMARY KEY, post_id INT NOT NULL); \
         INSERT INTO comments (post_id) VALUES (7), (7), (7); \
         CALL counter_setup('comments:7', 'comments', 4, NULL)",
    )
    .unwrap();
    let statements = documented_sql_sequence();
    assert_eq!(statements.len(), 8, "{statements:?}");
    for statement in statements {
        if statement.starts_with("SELECT name") {
            let read: Vec<(String, i64, Option<i64>)> = conn.query(&statement).unwrap();
            assert_eq!(read, [("comments:7".to_owned(), 3, Some(0))], "{statement}");
        } else {
            conn.query_drop(&statement).unwrap_or_else(|error| panic!("{statement}: {error}"));
        }
    }
    assert_eq!(total(&mut conn, "comments:7"), Some(3));
}

/// Reconciles on the third node of `cluster` while the first two comment
/// and uncomment, each change with its counter in one transaction, and the
/// first injects drifts for a while: every counter equals its comments at
/// the end, read causally on every node.
pub(crate) fn on_one_node_under_writes_on_the_others<C: MultiPrimary>(
    cluster: &C,
    database: &str,
    options: &PackageOptions,
) {
    multi_primary::install(cluster, database, options);
    let nodes = cluster.nodes();
    let mut setup = multi_primary::conn(nodes[0], database);
    let [_, comments] = SOURCE_TABLES;
    setup.query_drop(comments).unwrap();
    for post in 0..POSTS {
        setup.exec_drop("CALL counter_setup(?, 'comments', 8, NULL)", (format!("comments:{post}"),)).unwrap();
    }
    multi_primary::each_node_has_applied(cluster, database);
    let reconciler = multi_primary::client(nodes[2], database);
    let (running, drifting) = (AtomicBool::new(true), AtomicBool::new(true));
    let corrected = thread::scope(|scope| {
        for writer in 0..6_i64 {
            let (running, drifting) = (&running, &drifting);
            let node = writer as usize % 2;
            let mut conn = multi_primary::conn(nodes[node], database);
            // Ids of their own for each node's comments: a test before may
            // have left two members the same auto_increment_offset.
            conn.query_drop(format!(
                "SET SESSION auto_increment_increment = 2, auto_increment_offset = {}",
                node + 1
            ))
            .unwrap();
            scope.spawn(move || {
                let mut n = writer;
                while running.load(Ordering::SeqCst) {
                    let change = match n % 10 {
                        0 if writer == 0 && drifting.load(Ordering::SeqCst) => Change::CommentOnly,
                        1 if writer == 0 && drifting.load(Ordering::SeqCst) => Change::IncrementOnly,
                        0..=5 => Change::Comment,
                        _ => Change::Uncomment,
                    };
                    apply(&mut conn, Writes::Routines, change, (n * 7 + writer) % POSTS);
                    n += 1;
                }
            });
        }
        let stop = StopOnDrop(&running);
        let mut corrected = 0;
        for round in 0..8 {
            if round == 5 {
                drifting.store(false, Ordering::SeqCst);
            }
            thread::sleep(Duration::from_millis(300));
            let drifts = reconciler.reconcile(Reconcile::query(SOURCE).set("comments:")).unwrap();
            corrected += drifts.iter().filter(|drift| drift.correction == Correction::Added).count();
        }
        drop(stop);
        corrected
    });
    assert!(corrected > 0, "some reconcile corrected a drift");
    for node in nodes {
        let mut causal = multi_primary::causal_conn::<C>(node, database);
        for post in 0..POSTS {
            let (comments, counted): (i64, Option<i64>) = causal
                .exec_first(
                    "SELECT (SELECT COUNT(*) FROM comments WHERE post_id = ?), counter_get(?)",
                    (post, format!("comments:{post}")),
                )
                .unwrap()
                .unwrap();
            assert_eq!(Some(comments), counted, "post {post} on the node of port {}", node.port);
        }
    }
}

/// A source whose counts are UNSIGNED, BOOLEAN, DOUBLE or FLOAT columns
/// reads the same in both clients (their answers arrive in each driver's
/// own binary form): whole numbers are taken, a fraction and a date are
/// refused by name, never read as bytes.
fn a_source_counted_in_unsigned_boolean_or_double_columns_reads_alike_in_both_clients() {
    let db = support::with_package(&PackageOptions::default());
    let mut conn = db.conn();
    conn.query_drop(
        "CREATE TABLE sources (name VARCHAR(20), big BIGINT UNSIGNED, small TINYINT UNSIGNED, flag BOOLEAN, \
         ratio DOUBLE, share FLOAT, day DATE)",
    )
    .unwrap();
    conn.query_drop(
        "INSERT INTO sources VALUES ('a', 18446744073709551615, 200, TRUE, 3.0, 2.0, '2026-11-29')",
    )
    .unwrap();
    let counters = Counters::new(db.pool().clone()).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let async_counters = runtime.block_on(async {
        let pool = MySqlPoolOptions::new().connect(&db.url()).await.unwrap();
        AsyncCounters::new(pool).unwrap()
    });
    let source = |column: &str| format!("SELECT name, {column} FROM sources");
    for (column, counted) in [("small", 200), ("flag", 1), ("ratio", 3), ("share", 2), ("ratio * 7", 21)] {
        let query = source(column);
        let reconcile = Reconcile::query(&query).dry_run();
        for drifts in [counters.reconcile(reconcile), runtime.block_on(async_counters.reconcile(reconcile))] {
            let drifts = drifts.unwrap_or_else(|error| panic!("{column}: {error:?}"));
            assert_eq!(drifts.iter().map(|drift| drift.source).collect::<Vec<_>>(), [counted], "{column}");
        }
    }
    for (column, words) in [("big", "a whole number"), ("ratio / 2", "a whole number"), ("day", "read")] {
        let query = source(column);
        let reconcile = Reconcile::query(&query).dry_run();
        for refused in [counters.reconcile(reconcile), runtime.block_on(async_counters.reconcile(reconcile))]
        {
            let error = refused.expect_err(column);
            assert!(error.to_string().contains(words), "{column}: {error}");
            assert!(
                matches!(error, CounterError::InvalidArgument { .. } | CounterError::UnexpectedAnswer { .. }),
                "{column}: {error:?}"
            );
        }
    }
}
