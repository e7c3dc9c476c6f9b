//! Reinstalling the package while applications call it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use mysql::prelude::Queryable;
use slotted_counters::Counters;

use crate::support::{self, Database, committed_setup_sql, on_each_server, slotted_counters, succeeded};

on_each_server!(
    reinstalling_under_load_fails_no_call_on_mariadb,
    the_client_rides_through_a_reinstall_that_drops_routines,
);

/// Clients calling the package until stopped: what they saw.
struct Traffic {
    stop: Arc<AtomicBool>,
    acknowledged: Arc<AtomicU64>,
    failures: Arc<Mutex<Vec<String>>>,
    clients: Vec<thread::JoinHandle<()>>,
}

impl Traffic {
    /// `clients` threads that increment `name` and read it back, each call
    /// sent once: any error is recorded as a failure.
    fn raw_calls(db: &Database, clients: usize, name: &'static str) -> Self {
        Self::start(clients, |stop, acknowledged, failures| {
            let mut conn = db.conn();

            move || {
                let mut calls = 0_u64;
                while !stop.load(Ordering::Relaxed) {
                    calls += 1;
                    let outcome = if calls.is_multiple_of(8) {
                        conn.exec_first::<Option<i64>, _, _>("SELECT counter_get(?)", (name,)).map(|_| ())
                    } else {
                        conn.exec_drop("CALL counter_increment(?)", (name,)).map(|()| {
                            acknowledged.fetch_add(1, Ordering::SeqCst);
                        })
                    };
                    if let Err(error) = outcome {
                        failures.lock().unwrap().push(error.to_string());
                    }
                }
            }
        })
    }

    /// `clients` threads that increment `name` through the Rust client.
    fn client_calls(counters: &Counters, clients: usize, name: &'static str) -> Self {
        Self::start(clients, |stop, acknowledged, failures| {
            let counters = counters.clone();
            move || {
                while !stop.load(Ordering::Relaxed) {
                    match counters.increment(name) {
                        Ok(()) => {
                            acknowledged.fetch_add(1, Ordering::SeqCst);
                        }
                        Err(error) => failures.lock().unwrap().push(error.to_string()),
                    }
                }
            }
        })
    }

    fn start<F: FnOnce() + Send + 'static>(
        clients: usize,
        mut client: impl FnMut(Arc<AtomicBool>, Arc<AtomicU64>, Arc<Mutex<Vec<String>>>) -> F,
    ) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let acknowledged = Arc::new(AtomicU64::new(0));
        let failures = Arc::new(Mutex::new(Vec::new()));
        let clients = (0..clients)
            .map(|_| thread::spawn(client(stop.clone(), acknowledged.clone(), failures.clone())))
            .collect();
        Traffic { stop, acknowledged, failures, clients }
    }

    fn acknowledged(&self) -> u64 {
        self.acknowledged.load(Ordering::SeqCst)
    }

    /// Runs `change` while the clients call, and checks that some calls
    /// were acknowledged during it: the change really met traffic.
    fn during(&self, what: &str, change: impl FnOnce()) {
        let before = self.acknowledged();
        change();
        assert!(self.acknowledged() > before, "no call was acknowledged during {what}");
    }

    /// Stops the clients; returns the acknowledged increments and the failures.
    fn finish(self) -> (u64, Vec<String>) {
        self.stop.store(true, Ordering::Relaxed);
        for client in self.clients {
            client.join().expect("client thread");
        }
        let failures = self.failures.lock().unwrap().clone();
        (self.acknowledged.load(Ordering::SeqCst), failures)
    }
}

fn reinstalling_under_load_fails_no_call_on_mariadb() {
    let db = Database::new();
    let url = db.url();
    succeeded(slotted_counters(&["install", "--url", &url]));
    db.conn().query_drop("CALL counter_setup('hot', 'd', 16, NULL)").unwrap();
    let setup_sql = std::fs::read(committed_setup_sql("generated")).unwrap();

    let traffic = Traffic::raw_calls(&db, 16, "hot");
    thread::sleep(Duration::from_millis(200));
    for round in 0..4 {
        traffic.during(&format!("install {round}"), || {
            succeeded(slotted_counters(&["install", "--url", &url]));
        });
        traffic.during(&format!("setup.sql {round}"), || {
            let mut client = db.client().stdin(std::process::Stdio::piped()).spawn().unwrap();
            std::io::Write::write_all(client.stdin.as_mut().unwrap(), &setup_sql).unwrap();
            drop(client.stdin.take());
            assert!(client.wait().unwrap().success(), "mariadb < setup.sql failed");
        });
    }
    let (acknowledged, failures) = traffic.finish();

    assert!(
        failures.is_empty(),
        "{} calls failed during reinstalls, first: {:?}",
        failures.len(),
        failures.first()
    );
    assert_eq!(support::total(&mut db.conn(), "hot"), Some(acknowledged as i64));
}

/// Reinstalls routines as MySQL does, with no CREATE OR REPLACE: each is
/// dropped, stays missing for `gap`, and is created again.
fn drop_and_create(db: &Database, routines: &[(&str, &str)], gap: Duration) {
    let mut conn = db.conn();
    for (kind, name) in routines {
        let create: String = conn
            .query_first::<mysql::Row, _>(format!("SHOW CREATE {kind} `{name}`"))
            .unwrap()
            .and_then(|row| row.get(2))
            .expect("SHOW CREATE gives the definition third");
        conn.query_drop(format!("DROP {kind} `{name}`")).unwrap();
        thread::sleep(gap);
        conn.query_drop(create).unwrap();
    }
}

fn the_client_rides_through_a_reinstall_that_drops_routines() {
    let db = support::with_committed("generated");
    db.conn().query_drop("CALL counter_setup('hot', 'd', 16, NULL)").unwrap();
    let counters = Counters::new(db.pool().clone());

    let traffic = Traffic::client_calls(&counters, 16, "hot");
    thread::sleep(Duration::from_millis(200));
    // 16 busy clients cannot miss a 300 ms gap: without the client's
    // wait for missing routines, calls fail here with 1305.
    for _ in 0..3 {
        drop_and_create(
            &db,
            &[("PROCEDURE", "counter_increment"), ("PROCEDURE", "counter_add")],
            Duration::from_millis(300),
        );
    }
    let (acknowledged, failures) = traffic.finish();

    assert!(failures.is_empty(), "{} calls failed, first: {:?}", failures.len(), failures.first());
    assert_eq!(counters.get("hot").unwrap(), Some(acknowledged as i64));
}
