//! Each live test's wall time, written as it ends to [`TIMES_FILE`] under
//! the target folder, one `seconds<TAB>test<TAB>outcome` line per test, so
//! that `scripts/test` can print the slowest after the run. The first test
//! of a run empties the file: it holds the last run's tests.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

/// The file's name in the target folder.
pub const TIMES_FILE: &str = "live-test-times.tsv";

/// Where the times go: `target/`, the parent of the folder cargo gives
/// integration tests for their own files.
fn times_path() -> PathBuf {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent().map_or(tmp.clone(), PathBuf::from).join(TIMES_FILE)
}

/// Records the wall time of the test on this thread when dropped, whether
/// it passed or is unwinding from a failure. The test's name is its
/// thread's: libtest names each test's thread after the test.
pub struct Timed {
    started: Instant,
}

impl Timed {
    pub fn start() -> Self {
        Timed { started: Instant::now() }
    }
}

impl Drop for Timed {
    fn drop(&mut self) {
        static FILE: OnceLock<Option<Mutex<File>>> = OnceLock::new();
        let file = FILE.get_or_init(|| {
            OpenOptions::new().create(true).write(true).truncate(true).open(times_path()).ok().map(Mutex::new)
        });
        let thread = std::thread::current();
        let test = thread.name().unwrap_or("unnamed");
        let outcome = if std::thread::panicking() { "failed" } else { "ok" };
        if let Some(file) = file {
            // Never panic here: this may run while a failed test unwinds.
            let mut file = file.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let _ = writeln!(file, "{:.2}\t{test}\t{outcome}", self.started.elapsed().as_secs_f64());
        }
    }
}
