//! Recounting counters from their source of truth while writes go on: a
//! source table of comments, one counter per post kept in the same
//! transactions as its rows, drifts injected beside them, and reconciles
//! through every client and the command line.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::Duration;

use mysql::PooledConn;
use mysql::prelude::Queryable;
use slotted_counters::sqlx::mysql::MySqlPoolOptions;
use slotted_counters::{
    AsyncCounters, Correction, CounterError, Counters, Drift, PackageOptions, Reconcile, RetryBudget,
};

use crate::support::fault_proxy::FaultProxy;
use crate::support::{
    self, Database, StopOnDrop, on_each_server, server_error, slotted_counters, stderr, stdout, succeeded,
    total,
};

on_each_server!(
    reconciles_under_writes_leave_every_counter_equal_to_its_source,
    the_plain_mode_reconciles_under_writes_too,
    a_dry_run_changes_nothing_and_reports_every_drift,
    a_set_corrects_counters_without_source_rows_and_refuses_past_a_bound,
    two_reconciles_at_once_add_a_drift_once,
    reconciles_through_cut_connections_neither_lose_nor_double_a_correction,
    the_command_reconciles_and_reports_what_drifted,
    the_documented_sql_sequence_corrects_a_drift,
);

/// The posts, each counted by counter `comments:<post>`.
pub(crate) const POSTS: i64 = 10;

/// The query that counts each post's comments.
pub(crate) const SOURCE: &str = "SELECT CONCAT('comments:', post), COUNT(*) FROM comments GROUP BY post";

/// The default package, a table of comments and a counter per post.
fn with_comments() -> Database {
    let db = support::with_package(&PackageOptions::default());
    let mut conn = db.conn();
    conn.query_drop(
        "CREATE TABLE comments (id BIGINT AUTO_INCREMENT PRIMARY KEY, post INT NOT NULL, KEY (post))",
    )
    .unwrap();
    for post in 0..POSTS {
        conn.exec_drop("CALL counter_setup(?, 'comments', 8, NULL)", (format!("comments:{post}"),)).unwrap();
    }
    db
}

/// Each post's comments and its counter, which a test expects equal.
fn sources_and_counters(conn: &mut PooledConn) -> Vec<(i64, i64)> {
    (0..POSTS)
        .map(|post| {
            let comments: i64 =
                conn.exec_first("SELECT COUNT(*) FROM comments WHERE post = ?", (post,)).unwrap().unwrap();
            (comments, total(conn, &format!("comments:{post}")).unwrap())
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

/// Runs `change` on `post` in one transaction, again after a deadlock (or
/// a lost certification, on a cluster).
pub(crate) fn apply(conn: &mut impl Queryable, change: Change, post: i64) {
    let name = format!("comments:{post}");
    loop {
        let done = (|| -> Result<(), mysql::Error> {
            conn.query_drop("START TRANSACTION")?;
            match change {
                Change::Comment | Change::CommentOnly => {
                    conn.exec_drop("INSERT INTO comments (post) VALUES (?)", (post,))?;
                }
                Change::Uncomment => {
                    let id: Option<i64> = conn.exec_first(
                        "SELECT id FROM comments WHERE post = ? ORDER BY id LIMIT 1 FOR UPDATE",
                        (post,),
                    )?;
                    if let Some(id) = id {
                        conn.exec_drop("DELETE FROM comments WHERE id = ?", (id,))?;
                        conn.exec_drop("CALL counter_add(?, -1)", (&name,))?;
                    }
                }
                Change::IncrementOnly => {}
            }
            if let Change::Comment | Change::IncrementOnly = change {
                conn.exec_drop("CALL counter_increment(?)", (&name,))?;
            }
            conn.query_drop("COMMIT")
        })();
        match done {
            Ok(()) => return,
            Err(error) => {
                // A deadlock, or a certification lost on Galera, has
                // rolled the transaction back already.
                let _ = conn.query_drop("ROLLBACK");
                match server_error(error) {
                    (1213 | 1020, _) => continue,
                    (code, message) => panic!("a writer failed: {code} {message}"),
                }
            }
        }
    }
}

/// 16 writers comment and uncomment, each change with its counter in one
/// transaction, and inject drifts while `drifting`; `reconcile` (of the set
/// of every post's counter, a post without comments among them) runs 10
/// times meanwhile, the last ones after the drifts stopped, with writers
/// still writing. Then every counter equals its source, with no reconcile
/// after the writers stopped.
fn under_writes(db: &Database, reconcile: impl Fn() -> Vec<Drift> + Sync) {
    let running = AtomicBool::new(true);
    let drifting = AtomicBool::new(true);
    let (changes, corrected) = (AtomicU64::new(0), AtomicU64::new(0));
    thread::scope(|scope| {
        for writer in 0..16_u64 {
            let (running, drifting, changes) = (&running, &drifting, &changes);
            let mut conn = db.conn();
            scope.spawn(move || {
                let mut n = writer;
                while running.load(Ordering::SeqCst) {
                    let change = match n % 10 {
                        0 if drifting.load(Ordering::SeqCst) => Change::CommentOnly,
                        1 if drifting.load(Ordering::SeqCst) => Change::IncrementOnly,
                        0..=5 => Change::Comment,
                        _ => Change::Uncomment,
                    };
                    apply(&mut conn, change, (n * 7 + writer) as i64 % POSTS);
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
    let pairs = sources_and_counters(&mut db.conn());
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
    under_writes(&db, || {
        let reconcile = Reconcile::query(SOURCE).set("comments:");
        if round.fetch_add(1, Ordering::SeqCst).is_multiple_of(2) {
            counters.reconcile(reconcile).unwrap()
        } else {
            runtime.block_on(async_counters.reconcile(reconcile)).unwrap()
        }
    });
}

fn the_plain_mode_reconciles_under_writes_too() {
    let db = with_comments();
    let plain =
        Counters::builder(db.pool().clone()).package(&PackageOptions::default()).plain_sql().build().unwrap();
    under_writes(&db, || plain.reconcile(Reconcile::query(SOURCE).set("comments:")).unwrap());
}

/// Comments inserted without their increments: a dry run reports each
/// drift and leaves every slot as it was.
fn a_dry_run_changes_nothing_and_reports_every_drift() {
    let db = with_comments();
    let mut conn = db.conn();
    conn.query_drop("INSERT INTO comments (post) VALUES (1), (1), (2)").unwrap();
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

    for (query, words) in [
        ("SELECT 'a'", "rows of two columns"),
        ("SELECT 'comments:1', 1.5", "a whole number"),
        ("SELECT 'comments:1', 1 UNION ALL SELECT 'comments:1', 2", "twice"),
    ] {
        match counters.reconcile(Reconcile::query(query)) {
            Err(CounterError::InvalidArgument(message)) => assert!(message.contains(words), "{message}"),
            other => panic!("{query}: {other:?}"),
        }
    }
}

/// Two reconciles at once, from two clients, of one drift: the second
/// waits for the first and finds nothing left to add.
fn two_reconciles_at_once_add_a_drift_once() {
    let db = with_comments();
    let mut conn = db.conn();
    let clients = [(); 2].map(|_| Counters::new(db.pool().clone()).unwrap());
    for round in 0..20 {
        conn.query_drop("INSERT INTO comments (post) VALUES (1), (1), (1)").unwrap();
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

/// Drifts corrected through a proxy that cuts connections: a correction
/// whose answer was lost is sent again under its id, or found in the next
/// snapshot, and is never counted twice nor lost.
fn reconciles_through_cut_connections_neither_lose_nor_double_a_correction() {
    let db = with_comments();
    let mut conn = db.conn();
    let proxy = FaultProxy::start(db.address(), 1.0 / 12.0);
    let counters = Counters::builder(proxy.pool(&db.url()))
        .retry(RetryBudget::Time(Duration::from_secs(30)))
        .build()
        .unwrap();
    for round in 0..40 {
        let post = round % POSTS;
        conn.exec_drop("INSERT INTO comments (post) VALUES (?), (?)", (post, post)).unwrap();
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
    conn.query_drop("INSERT INTO comments (post) VALUES (5), (5)").unwrap();
    let url = db.url();
    let dry =
        stdout(&succeeded(slotted_counters(&["reconcile", "--url", &url, "--query", SOURCE, "--dry-run"])));
    assert!(dry.contains("comments:5") && dry.contains("not added (dry run)"), "{dry}");
    assert_eq!(total(&mut conn, "comments:5"), Some(0));
    let done = stdout(&succeeded(slotted_counters(&["reconcile", "--url", &url, "--query", SOURCE])));
    assert!(done.contains("added") && done.ends_with("1 counters read, 1 drifted, 1 corrected\n"), "{done}");
    assert_eq!(total(&mut conn, "comments:5"), Some(2));

    conn.query_drop("CALL counter_bound('comments:5', NULL, 2); INSERT INTO comments (post) VALUES (5)")
        .unwrap();
    let refused = slotted_counters(&["reconcile", "--url", &url, "--query", SOURCE]);
    assert_eq!(refused.status.code(), Some(1), "{}", stdout(&refused));
    assert!(stderr(&refused).contains("the write would pass the ceiling 2"), "{}", stderr(&refused));
    assert_eq!(total(&mut conn, "comments:5"), Some(2));
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
    assert_eq!(statements.len(), 7, "{statements:?}");
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
