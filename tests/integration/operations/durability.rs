//! Crashes, replicas and dumps, each on servers of the test's own: a kill -9
//! under load, a primary with a replica, a dump restored elsewhere.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

use mysql::prelude::Queryable;
use mysql::{Conn, Opts};
use slotted_counters::{PackageOptions, render, script};

use crate::support::server::Booted;

/// Boots a server of the test's own with `config`, and a database `name`
/// on it holding the default package.
fn booted_with_package(config: &str, name: &str) -> Booted {
    let server = Booted::start(config).unwrap_or_else(|problem| panic!("cannot boot a server: {problem}"));
    server.root_conn().query_drop(format!("CREATE DATABASE `{name}`")).unwrap();
    let script = render::setup_sql(&PackageOptions::default()).unwrap();
    script::run(&mut connect(&server, name), &script).unwrap();
    server
}

fn connect(server: &Booted, database: &str) -> Conn {
    Conn::new(Opts::from_url(&server.url(database)).unwrap()).unwrap()
}

/// What one client saw before the server went away.
struct Seen {
    acknowledged: u64,
    /// Calls that got an error: each may or may not have been applied.
    unanswered: u64,
}

#[test]
fn a_crash_loses_no_acknowledged_increment_and_applies_none_by_half() {
    let mut server = booted_with_package("", "app");
    let mut conn = connect(&server, "app");
    conn.query_drop("CALL counter_setup('hot', 'd', 16, NULL)").unwrap();
    conn.query_drop("CALL counter_setup('resized', 'd', 8, 1000)").unwrap();

    let running = Arc::new(AtomicBool::new(true));
    let incrementing: Vec<thread::JoinHandle<Seen>> = (0..32)
        .map(|_| {
            let mut conn = connect(&server, "app");
            let running = running.clone();
            thread::spawn(move || {
                let mut seen = Seen { acknowledged: 0, unanswered: 0 };
                while running.load(Ordering::Relaxed) {
                    match conn.query_drop("CALL counter_add('hot', 1)") {
                        Ok(()) => seen.acknowledged += 1,
                        Err(_) => {
                            seen.unanswered += 1;
                            break;
                        }
                    }
                }
                seen
            })
        })
        .collect();
    let resizing = {
        let mut conn = connect(&server, "app");
        let running = running.clone();
        thread::spawn(move || {
            let mut resizes = 0_u32;
            while running.load(Ordering::Relaxed) {
                let slots = if resizes % 2 == 0 { 16 } else { 8 };
                if conn.exec_drop("CALL counter_resize('resized', ?)", (slots,)).is_err() {
                    break;
                }
                resizes += 1;
            }
            resizes
        })
    };

    thread::sleep(Duration::from_millis(1500));
    server.kill9();
    running.store(false, Ordering::Relaxed);
    let seen: Vec<Seen> = incrementing.into_iter().map(|client| client.join().unwrap()).collect();
    let resizes = resizing.join().unwrap();
    server.restart();

    let acknowledged: u64 = seen.iter().map(|seen| seen.acknowledged).sum();
    let unanswered: u64 = seen.iter().map(|seen| seen.unanswered).sum();
    assert!(
        acknowledged > 1000 && resizes > 2,
        "the crash met load: {acknowledged} increments, {resizes} resizes"
    );
    let mut conn = connect(&server, "app");
    let total: i64 = conn.query_first("SELECT counter_get('hot')").unwrap().flatten().unwrap();
    assert!(
        (acknowledged..=acknowledged + unanswered).contains(&(total as u64)),
        "{total} counted for {acknowledged} acknowledged increments and {unanswered} unanswered"
    );
    let slots: Vec<u32> = conn
        .query("SELECT counter_id FROM counters WHERE counter_name = 'resized' ORDER BY counter_id")
        .unwrap();
    assert!(
        slots == (1..=8).collect::<Vec<_>>() || slots == (1..=16).collect::<Vec<_>>(),
        "a resize was applied by half: slots {slots:?}"
    );
    let resized: Option<i64> = conn.query_first("SELECT counter_get('resized')").unwrap().flatten();
    assert_eq!(resized, Some(1000), "resizes keep the total through a crash");
}
