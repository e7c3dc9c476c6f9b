//! The floor under every figure of a run: what one durable commit costs on
//! this machine and server. A coalesced flush cannot commit faster than a
//! bare one-row `UPDATE` does alone, and that cannot be faster than an
//! fsync of the disk the server logs to; the report shows each coalesced
//! round's flush time beside them.

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use serde::Serialize;

use crate::error::Error;

/// Fsyncs and commits each measurement times, one after the other: enough
/// for a steady median in well under a second.
const SAMPLES: usize = 400;

/// What one durable commit costs here, each figure the median of
/// [`SAMPLES`] made one after the other.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Floor {
    /// A 4 KiB write and `fdatasync` of one file, in milliseconds.
    pub fsync_ms: f64,
    /// Where that file was: the server's data directory when this machine
    /// sees it, else the temporary directory (a server in a chroot or on
    /// another host logs to a disk this figure may not be of).
    pub fsync_dir: PathBuf,
    /// One autocommit `UPDATE` of one row by one client, with the server's
    /// settings (a binary log synced at each commit, when the server has
    /// one), in milliseconds: what a flush would cost with nothing added.
    pub commit_ms: f64,
}

impl Floor {
    /// Measures both figures, the commit's on `conn` in a table of its own,
    /// dropped afterwards.
    pub fn measure(conn: &mut impl Queryable) -> Result<Self, Error> {
        let datadir: Option<String> = conn.query_first("SELECT @@datadir").map_err(Error::Query)?;
        let fsync_dir =
            datadir.map(PathBuf::from).filter(|dir| dir.is_dir()).unwrap_or_else(std::env::temp_dir);
        let fsync_ms = fsync_median(&fsync_dir)?;
        let commit_ms = commit_median(conn)?;
        Ok(Floor { fsync_ms, fsync_dir, commit_ms })
    }

    /// How the report's first line reads it.
    pub fn describe(&self) -> String {
        format!(
            "floor: fsync {:.3} ms (in {}), a bare one-row commit {:.3} ms (medians of {SAMPLES})",
            self.fsync_ms,
            self.fsync_dir.display(),
            self.commit_ms
        )
    }
}

/// The median time of a 4 KiB write and `fdatasync` of a file in `dir`,
/// the file removed afterwards.
fn fsync_median(dir: &Path) -> Result<f64, Error> {
    let path = dir.join(format!("slotted-counters-fsync-{}", std::process::id()));
    let file = OpenOptions::new().create_new(true).write(true).open(&path);
    let file = file.map_err(|source| Error::Io { action: "create", path: path.clone(), source })?;
    let measured = fsync_times(file);
    let removed = std::fs::remove_file(&path);
    let times =
        measured.map_err(|source| Error::Io { action: "write and sync", path: path.clone(), source })?;
    removed.map_err(|source| Error::Io { action: "remove", path, source })?;
    Ok(median(times))
}

/// [`SAMPLES`] times, a 4 KiB write at the start of `file` and its
/// `fdatasync`, each timed.
fn fsync_times(mut file: File) -> std::io::Result<Vec<Duration>> {
    let block = [0u8; 4096];
    let mut times = Vec::with_capacity(SAMPLES);
    for _ in 0..SAMPLES {
        let began = Instant::now();
        file.seek(SeekFrom::Start(0))?;
        file.write_all(&block)?;
        file.sync_data()?;
        times.push(began.elapsed());
    }
    Ok(times)
}

/// The median time of one autocommit one-row `UPDATE` on `conn`.
fn commit_median(conn: &mut impl Queryable) -> Result<f64, Error> {
    conn.query_drop(
        "DROP TABLE IF EXISTS bench_floor;
         CREATE TABLE bench_floor (id INT NOT NULL PRIMARY KEY, n BIGINT NOT NULL) ENGINE=InnoDB;
         INSERT INTO bench_floor VALUES (1, 0)",
    )
    .map_err(Error::Query)?;
    let update = conn.prep("UPDATE bench_floor SET n = n + 1 WHERE id = 1").map_err(Error::Query)?;
    let mut times = Vec::with_capacity(SAMPLES);
    for _ in 0..SAMPLES {
        let began = Instant::now();
        conn.exec_drop(&update, ()).map_err(Error::Query)?;
        times.push(began.elapsed());
    }
    conn.close(update).map_err(Error::Query)?;
    conn.query_drop("DROP TABLE bench_floor").map_err(Error::Query)?;
    Ok(median(times))
}

/// The median of `times`, in milliseconds.
fn median(mut times: Vec<Duration>) -> f64 {
    times.sort_unstable();
    times.get(times.len() / 2).map_or(0.0, |time| time.as_secs_f64() * 1_000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_is_the_middle_time_in_milliseconds() {
        let times = [3, 1, 2].map(Duration::from_millis).to_vec();
        assert_eq!(median(times), 2.0);
        assert_eq!(median(Vec::new()), 0.0);
    }

    #[test]
    fn an_fsync_is_measured_in_the_directory_given_and_leaves_no_file() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let fsync = fsync_median(dir.path()).expect("fsyncs in a writable directory");
        assert!(fsync > 0.0);
        assert_eq!(std::fs::read_dir(dir.path()).expect("the directory").count(), 0);
    }

    #[test]
    fn an_fsync_in_a_missing_directory_names_the_file() {
        let error = fsync_median(Path::new("/nonexistent/floor")).expect_err("no such directory");
        assert!(error.to_string().contains("/nonexistent/floor/slotted-counters-fsync-"), "{error}");
    }
}
