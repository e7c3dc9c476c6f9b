//! What a round measures beside its clients' answers: the server's
//! counters and this process's CPU time, each read before and after the
//! round, and what the coalescing handles flushed.

use std::collections::HashMap;
use std::time::Duration;

use mysql::prelude::Queryable;

use super::super::report::CpuTime;
use super::super::variant::Variant;
use super::super::workbench::Workbench;
use crate::database;
use crate::error::Error;
use slotted_counters::{Coalescing, FlushStats};

impl Workbench {
    /// The server's counters, summed over the nodes; on a Group
    /// Replication group, its conflicts, which every member counts for the
    /// whole group: the first node's.
    pub(super) fn server_counters(&self) -> Result<ServerCounters, Error> {
        let mut counters =
            ServerCounters { status: HashMap::new(), deadlocks: Some(0), group_conflicts: None };
        let on_group = self.server().group_replication_members.is_some();
        for (node, pool) in self.pools.iter().enumerate() {
            let mut conn = pool.get_conn().map_err(Error::Query)?;
            for (name, value) in status_counters(&mut conn)? {
                *counters.status.entry(name).or_default() += value;
            }
            counters.deadlocks =
                counters.deadlocks.zip(database::deadlocks(&mut conn)?).map(|(sum, node)| sum + node);
            if on_group && node == 0 {
                counters.group_conflicts = group_conflicts(&mut conn)?;
            }
        }
        Ok(counters)
    }

    /// What the coalescing handles of `variant` have flushed so far, summed
    /// over the nodes.
    pub(super) fn flush_stats(&self, variant: Variant) -> FlushStats {
        match &self.tasks {
            Some(tasks) if variant == Variant::CoalescedAsync => summed(tasks.flush_stats()),
            _ => summed(self.coalescing_for(variant).iter().map(Coalescing::stats)),
        }
    }
}

/// What several coalescing handles have flushed, together.
fn summed(stats: impl Iterator<Item = FlushStats>) -> FlushStats {
    stats.fold(FlushStats::default(), |sum, node| FlushStats {
        busy: sum.busy + node.busy,
        flushes: sum.flushes + node.flushes,
        deltas: sum.deltas + node.deltas,
    })
}
/// What the server counts that a round reports, read before and after it.
pub(super) struct ServerCounters {
    /// [`status_counters`], by name.
    pub(super) status: HashMap<String, u64>,
    /// Deadlocks, where every node counts them.
    pub(super) deadlocks: Option<u64>,
    /// A Group Replication group's certification conflicts.
    pub(super) group_conflicts: Option<u64>,
}

/// The certification conflicts the group has counted, from this member's
/// own row of `replication_group_member_stats` (every member certifies
/// every transaction).
fn group_conflicts(conn: &mut impl Queryable) -> Result<Option<u64>, Error> {
    conn.query_first(
        "SELECT COUNT_CONFLICTS_DETECTED FROM performance_schema.replication_group_member_stats \
         WHERE MEMBER_ID = @@GLOBAL.server_uuid",
    )
    .map_err(Error::Query)
}

/// `Innodb_row_lock_waits`, `Innodb_row_lock_time` and Galera's
/// certification failures and brute-force aborts as the server reports them;
/// a server without one of them leaves it out.
fn status_counters(conn: &mut impl Queryable) -> Result<HashMap<String, u64>, Error> {
    let rows: Vec<(String, String)> = conn
        .query(
            "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_row_lock_waits', 'Innodb_row_lock_time', \
             'wsrep_local_cert_failures', 'wsrep_local_bf_aborts')",
        )
        .map_err(Error::Query)?;
    Ok(rows.into_iter().filter_map(|(name, value)| Some((name, value.parse().ok()?))).collect())
}

/// The CPU time this process has used, as `getrusage` counts it: every
/// thread's, in user space and in the kernel.
pub(super) struct ProcessCpu {
    user: Duration,
    system: Duration,
}

impl ProcessCpu {
    pub(super) fn now() -> Self {
        // SAFETY: getrusage only writes the struct it is given, which is
        // plain data that all zeros is a valid value of.
        let usage = unsafe {
            let mut usage: libc::rusage = std::mem::zeroed();
            libc::getrusage(libc::RUSAGE_SELF, &mut usage);
            usage
        };
        let time = |value: libc::timeval| {
            Duration::from_secs(value.tv_sec as u64) + Duration::from_micros(value.tv_usec as u64)
        };
        ProcessCpu { user: time(usage.ru_utime), system: time(usage.ru_stime) }
    }

    pub(super) fn since(&self, before: &ProcessCpu) -> ProcessCpu {
        ProcessCpu {
            user: self.user.saturating_sub(before.user),
            system: self.system.saturating_sub(before.system),
        }
    }

    /// Microseconds per one of `increments`; zeros when there were none.
    pub(super) fn per(&self, increments: u64) -> CpuTime {
        if increments == 0 {
            return CpuTime::default();
        }
        let per = |time: Duration| time.as_secs_f64() * 1e6 / increments as f64;
        CpuTime { user: per(self.user), system: per(self.system) }
    }
}
