//! The sync client's calls against a scripted driver: a call made through
//! it is retried under one write id, blocking between tries.

use slotted_counters_core::PackageOptions;
use slotted_counters_core::package::server_errno;

use super::*;
use crate::retry::RetryBudget;
use crate::scripted::{Reply, ScriptedDriver};

#[test]
fn a_call_is_retried_under_one_write_id_within_its_attempts() {
    let deadlock = Reply::Error(server_errno::DEADLOCK);
    let driver = ScriptedDriver::new([deadlock.clone(), Reply::Changed(0), deadlock, Reply::Changed(0)]);
    let engine = Engine::new(driver.clone(), &PackageOptions::default())
        .with_write_ids()
        .with_retry(RetryBudget::Attempts(2));
    let counters = Counters { engine };
    assert_eq!(counters.add("likes", 2).unwrap_err().code(), Some(server_errno::DEADLOCK));
    let sent = driver.sent();
    let calls: Vec<_> = sent.iter().filter(|sent| sent.sql.starts_with("CALL")).collect();
    assert_eq!(calls.len(), 2, "two attempts: {sent:?}");
    assert!(calls.iter().all(|call| call.sql == "CALL `counter_add_once`(?, ?, ?)"));
    assert_eq!(calls[0].params, calls[1].params, "one write id for both");
    assert_eq!(driver.pauses().len(), 1);
}
