//! The test servers: one of each [`Release`] per `cargo test` run (MariaDB
//! 10.11, MariaDB 11.8, MySQL 9.7), each booted by the first test that needs
//! it, or given.
//!
//! A booted server gets a data folder of its own (`mariadb-install-db`, or
//! `mysqld --initialize-insecure` in MySQL's chroot), a free loopback port
//! and binary logging, as production runs it. The shared servers skip the
//! sync at each commit: what the suite asserts of them holds either way,
//! and a sync per write is most of their time. The tests of crashes,
//! replicas and group commit boot servers of their own that sync every
//! commit, as production's do ([`Launch::durable`]). A small shell
//! guardian owns the server and holds a pipe from this process: when the
//! test binary exits, however it exits, the pipe closes and the guardian
//! stops the server and removes its folder.
//!
//! Each live test runs once per server ([`on_each_server!`]), and the test's
//! thread knows which ([`release`], and what it behaves as: [`flavor`]). With
//! `MYSQL_TEST_URL=mysql://user:pass@host:port/`, the tests of the release
//! that server stands for (told by its `VERSION()`: MariaDB 11 and later for
//! 11.8, earlier for 10.11) run on it instead of a booted one; the user must
//! be able to create and drop databases.

use std::cell::Cell;
use std::env;
use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, Once, OnceLock};
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use mysql::{Opts, OptsBuilder};

use super::flavor::{Flavor, Program, Release};

/// The account the tests use on a booted server (root may only log in by socket).
pub const TEST_USER: &str = "slotted";
pub const TEST_PASSWORD: &str = "slotted-test";

/// Stops the server when this process goes away: EOF on stdin means the test
/// binary has exited, whether it finished, panicked or was killed.
/// Arguments: the server's folder, then the command that runs the server.
const GUARDIAN: &str = r#"
exec 3<&0
dir=$1
shift
"$@" >"$dir/server.log" 2>&1 &
server=$!
( read -r _ <&3; kill "$server" 2>/dev/null ) &
watcher=$!
wait "$server"
# The server stopped by itself: keep its folder so the log can be read.
if kill -0 "$watcher" 2>/dev/null; then exit 1; fi
rm -rf "$dir"
"#;

thread_local! {
    /// The server the live test on this thread runs on.
    static RELEASE: Cell<Option<Release>> = const { Cell::new(None) };
}

/// Runs `test` as a live test on `release`'s server: [`release`], [`flavor`]
/// and [`current`] answer for it on this thread.
/// Its wall time is recorded ([`super::timing`]).
pub fn on(release: Release, test: impl FnOnce()) {
    let _timed = super::timing::Timed::start();
    as_on(release, test);
}

/// Runs `part` of a test on `release`'s server, as [`on`] runs a whole one,
/// for a test whose other parts run elsewhere (another engine).
pub fn as_on<T>(release: Release, part: impl FnOnce() -> T) -> T {
    /// Gives the thread its server back, even as a failed part unwinds.
    struct Restore(Option<Release>);
    impl Drop for Restore {
        fn drop(&mut self) {
            RELEASE.set(self.0);
        }
    }
    let _restore = Restore(RELEASE.replace(Some(release)));
    part()
}

/// The server the live test on this thread runs on.
pub fn release() -> Release {
    RELEASE.get().expect("a live test is declared with on_each_server!, which says on which server it runs")
}

/// What the server the live test on this thread runs on behaves as.
pub fn flavor() -> Flavor {
    release().flavor()
}

/// The shared server of the live test on this thread.
pub fn current() -> &'static Server {
    server(release())
}

/// A server the tests can use, booted or given.
pub struct Server {
    /// Options to reach it as a user who may create databases; no database selected.
    pub(super) opts: Opts,
    pub release: Release,
    /// Held in a static, never dropped: its guardian's stdin closing at
    /// exit is what stops it.
    _booted: Option<Mutex<Booted>>,
}

/// The shared server of `release`: the one `MYSQL_TEST_URL` names when it
/// stands for that release, else one booted on first use.
pub fn server(release: Release) -> &'static Server {
    static GIVEN: OnceLock<Option<Server>> = OnceLock::new();
    static BOOTED: [OnceLock<Server>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let given = GIVEN.get_or_init(|| {
        let url = env::var("MYSQL_TEST_URL").ok()?;
        let opts =
            Opts::from_url(&url).unwrap_or_else(|error| panic!("MYSQL_TEST_URL is not a valid URL: {error}"));
        let version: String = mysql::Conn::new(opts.clone())
            .and_then(|mut conn| conn.query_first("SELECT VERSION()"))
            .unwrap_or_else(|error| panic!("cannot reach the server of MYSQL_TEST_URL: {error}"))
            .unwrap_or_default();
        Some(Server { opts, release: Release::of_version(&version), _booted: None })
    });
    if let Some(given) = given.as_ref().filter(|given| given.release == release) {
        return given;
    }
    BOOTED[release as usize].get_or_init(|| {
        let booted = Booted::launch(&Launch { durable: false, ..Launch::new(release) })
            .unwrap_or_else(|problem| panic!("cannot start a {release} server for the tests: {problem}"));
        Server { opts: booted.opts.clone(), release, _booted: Some(Mutex::new(booted)) }
    })
}

impl Server {
    pub(super) fn admin_conn(&self) -> mysql::Conn {
        mysql::Conn::new(self.opts.clone()).expect("connect to the test server")
    }

    /// Drops `database` when the test binary exits, on a server given by
    /// `MYSQL_TEST_URL`: the run's shared databases outlive their tests,
    /// and a booted server goes away whole.
    pub(super) fn drop_at_exit(&'static self, database: &str) {
        static LEFT: Mutex<Vec<(&Server, String)>> = Mutex::new(Vec::new());
        static REGISTERED: Once = Once::new();
        unsafe extern "C" {
            fn atexit(callback: extern "C" fn()) -> std::ffi::c_int;
        }
        extern "C" fn drop_left() {
            // A panic must not unwind into the C library's exit: ignored,
            // as every error here is.
            let _ = std::panic::catch_unwind(|| {
                let left = std::mem::take(&mut *LEFT.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
                for (server, database) in left {
                    if let Ok(mut conn) = mysql::Conn::new(server.opts.clone()) {
                        let _ = conn.query_drop(format!("DROP DATABASE IF EXISTS `{database}`"));
                    }
                }
            });
        }
        if self._booted.is_some() {
            return;
        }
        // SAFETY: `drop_left` takes no argument and catches every panic, so
        // none unwinds into the C library's exit, which calls it.
        REGISTERED.call_once(|| unsafe {
            atexit(drop_left);
        });
        LEFT.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push((self, database.to_owned()));
    }
}

/// How to boot a server beyond the common settings.
pub struct Launch<'a> {
    pub release: Release,
    /// Lines of the `[mysqld]` group; a setting here overrides the common one.
    pub config: &'a str,
    /// Run as the `mysql` user instead of root: Galera's rsync state
    /// transfer fails as root.
    pub as_mysql_user: bool,
    /// Arguments for this start only, such as `--wsrep-new-cluster`.
    pub server_args: &'a [&'a str],
    /// Whether to create the test user once the server answers. A Galera
    /// node answers before it can run statements, and a joiner receives
    /// the user with its state transfer: the cluster creates it itself.
    pub create_user: bool,
    /// Whether every commit is synced to disk, its binary log included
    /// (`innodb_flush_log_at_trx_commit=1`, `sync_binlog=1`), as a crash
    /// test needs; otherwise the server writes at each commit and syncs
    /// about once a second, and skips the doublewrite buffer.
    pub durable: bool,
}

impl Launch<'_> {
    pub fn new(release: Release) -> Self {
        Launch {
            release,
            config: "",
            as_mysql_user: false,
            server_args: &[],
            create_user: true,
            durable: true,
        }
    }
}

/// A server booted by this process, with its folder and guardian.
pub struct Booted {
    pub release: Release,
    /// Options to reach it over TCP as the test user; no database selected.
    pub opts: Opts,
    pub port: u16,
    /// Its folder, as this process sees it.
    pub dir: PathBuf,
    /// The command that runs the server, without this start's arguments.
    command: Vec<std::ffi::OsString>,
    guardian: Child,
}

impl Booted {
    /// Makes a fresh data folder and starts a `release` server on it, with
    /// binary logging and durable commits plus `extra_config` (lines of the
    /// `[mysqld]` group), and creates the test user.
    pub fn start(release: Release, extra_config: &str) -> Result<Booted, String> {
        Self::launch(&Launch { config: extra_config, ..Launch::new(release) })
    }

    /// Boots a server as `launch` says.
    pub fn launch(launch: &Launch<'_>) -> Result<Booted, String> {
        let release = launch.release;
        let mut server = release.command(Program::Server)?;
        let dir = release
            .visible_tempdir(&format!("slotted-counters-{}-", release.flavor().name().to_lowercase()))?
            .keep();
        let inner = |path: &Path| release.inner_path(path).display().to_string();
        let datadir = dir.join("data");
        // Each server a temporary folder of its own: a starting server
        // removes every `#sql*` file in its tmpdir, another's included.
        let tmpdir = dir.join("tmp");
        fs::create_dir(&tmpdir).map_err(|error| format!("cannot create {}: {error}", tmpdir.display()))?;
        let user = if launch.as_mysql_user {
            // The mysql user must reach its folders, and own them.
            set_mode(&dir, 0o755)?;
            super::flavor::run(Command::new("chown").arg("mysql:mysql").arg(&dir).arg(&tmpdir))?;
            "mysql"
        } else {
            "root"
        };

        let port = free_port()?;
        let config = format!(
            "[mysqld]\n\
             datadir={datadir}\n\
             tmpdir={tmpdir}\n\
             socket={dir}/mysqld.sock\n\
             pid-file={dir}/server.pid\n\
             port={port}\n\
             bind-address=127.0.0.1\n\
             skip-name-resolve\n\
             user={user}\n\
             log-bin={dir}/binlog\n\
             server-id=1\n\
             {commits}\
             max_connections=1000\n\
             {own}\
             {extra_config}\n",
            datadir = inner(&datadir),
            tmpdir = inner(&tmpdir),
            dir = inner(&dir),
            commits = if launch.durable {
                "innodb_flush_log_at_trx_commit=1\nsync_binlog=1\n"
            } else {
                "innodb_flush_log_at_trx_commit=2\nsync_binlog=0\ninnodb_doublewrite=0\n"
            },
            own = release.own_settings(),
            extra_config = launch.config,
        );
        let config_path = dir.join("my.cnf");
        fs::write(&config_path, config)
            .map_err(|error| format!("cannot write {}: {error}", config_path.display()))?;
        // The server ignores a world-writable config file; Galera's state
        // transfer, run as the mysql user, reads it too.
        set_mode(&config_path, 0o644)?;
        release.initialize(&config_path, &datadir, &tmpdir, user)?;
        if launch.as_mysql_user {
            // Its binary log, socket and pid file live beside the data.
            super::flavor::run(Command::new("chown").arg("-R").arg("mysql:mysql").arg(&dir))?;
        }

        server.arg(format!("--defaults-file={}", inner(&config_path)));
        let command: Vec<_> =
            std::iter::once(server.get_program()).chain(server.get_args()).map(ToOwned::to_owned).collect();
        let guardian = guard(&dir, &command, launch.server_args)?;
        let mut booted = Booted { release, opts: Opts::default(), port, dir, command, guardian };
        booted.wait_until_up()?;
        if launch.create_user {
            booted.create_test_user()?;
        }
        booted.opts = OptsBuilder::new()
            .ip_or_hostname(Some("127.0.0.1"))
            .tcp_port(port)
            .user(Some(TEST_USER))
            .pass(Some(TEST_PASSWORD))
            .prefer_socket(false)
            .into();
        Ok(booted)
    }

    /// Creates the account the tests log in with, with binary logging off
    /// for the session so that a replica of this server does not replay it.
    pub fn create_test_user(&self) -> Result<(), String> {
        let mut conn =
            mysql::Conn::new(self.root_opts()).map_err(|error| format!("cannot connect as root: {error}"))?;
        run_each(
            &mut conn,
            &[
                "SET SESSION sql_log_bin = 0",
                &format!("CREATE USER '{TEST_USER}'@'127.0.0.1' IDENTIFIED BY '{TEST_PASSWORD}'"),
                &format!("GRANT ALL ON *.* TO '{TEST_USER}'@'127.0.0.1' WITH GRANT OPTION"),
            ],
        )
        .map_err(|error| format!("cannot create the test user: {error}"))
    }

    /// A root connection over the server's socket.
    pub fn root_conn(&self) -> mysql::Conn {
        mysql::Conn::new(self.root_opts()).expect("connect as root over the socket")
    }

    pub fn root_opts(&self) -> OptsBuilder {
        OptsBuilder::new().socket(Some(self.dir.join("mysqld.sock").display().to_string())).user(Some("root"))
    }

    /// `mysql://user:password@127.0.0.1:port/database` for the test user.
    pub fn url(&self, database: &str) -> String {
        format!("mysql://{TEST_USER}:{TEST_PASSWORD}@127.0.0.1:{}/{database}", self.port)
    }

    /// The server's command-line `program` (client or dump) logged in as
    /// the test user over TCP, with a utf8mb4 connection.
    pub fn client(&self, program: Program) -> Command {
        self.release.client(program, &self.opts)
    }

    /// Kills the server with SIGKILL, as a crash would, and waits until it is gone.
    pub fn kill9(&mut self) {
        let pid = fs::read_to_string(self.dir.join("server.pid")).expect("read the server's pid file");
        let killed = Command::new("kill").args(["-9", pid.trim()]).status().expect("run kill");
        assert!(killed.success(), "kill -9 {pid} failed");
        self.wait_until_stopped();
    }

    /// Shuts the server down cleanly, as an operator would, and waits until
    /// it is gone. Its folder stays, for [`Booted::restart`].
    pub fn shut_down(&mut self) {
        self.root_conn().query_drop("SHUTDOWN").expect("shut the server down");
        self.wait_until_stopped();
    }

    /// Waits until the server has stopped by itself. The guardian sees it and
    /// exits, keeping the folder. Polled, not waited for: `Child::wait`
    /// closes its stdin, which tells the guardian to remove the folder.
    fn wait_until_stopped(&mut self) {
        while self.guardian.try_wait().expect("poll the guardian").is_none() {
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Starts the server again on the same folder, after [`Booted::kill9`]
    /// or [`Booted::shut_down`].
    pub fn restart(&mut self) {
        self.guardian = guard(&self.dir, &self.command, &[]).expect("restart the server");
        self.wait_until_up().expect("the server comes back after a crash");
    }

    /// Polls until the server accepts a connection, or reports why it never will.
    fn wait_until_up(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            match mysql::Conn::new(self.root_opts()) {
                Ok(_) => return Ok(()),
                Err(error) => {
                    if let Ok(Some(_)) = self.guardian.try_wait() {
                        let log = fs::read_to_string(self.dir.join("server.log")).unwrap_or_default();
                        let _ = fs::remove_dir_all(&self.dir);
                        let tail: Vec<&str> = log.lines().rev().take(60).collect();
                        let tail: Vec<&str> = tail.into_iter().rev().collect();
                        return Err(format!(
                            "the {} server exited during startup; its log ends:\n{}",
                            self.release,
                            tail.join("\n")
                        ));
                    }
                    if Instant::now() > deadline {
                        return Err(format!(
                            "the {} server did not answer within 120 s: {error}",
                            self.release
                        ));
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
        }
    }
}

impl Drop for Booted {
    /// Stops the server and removes its folder: EOF on the guardian's stdin.
    fn drop(&mut self) {
        drop(self.guardian.stdin.take());
        let _ = self.guardian.wait();
    }
}

/// Starts `command` with `server_args` on the folder `dir` under a guardian
/// that stops it when this process closes the guardian's stdin, however it
/// exits.
pub fn guard(dir: &Path, command: &[std::ffi::OsString], server_args: &[&str]) -> Result<Child, String> {
    Command::new("sh")
        .args(["-c", GUARDIAN, "slotted-counters-guardian"])
        .arg(dir)
        .args(command)
        .args(server_args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|error| format!("cannot start sh: {error}"))
}

/// Runs `statements` one at a time. One `query_drop` of several statements
/// would report only the first one's error: the mysql crate drops the later
/// results, errors included, unread.
pub fn run_each(conn: &mut impl Queryable, statements: &[&str]) -> Result<(), mysql::Error> {
    statements.iter().try_for_each(|statement| conn.query_drop(statement))
}

pub fn free_port() -> Result<u16, String> {
    let listener =
        TcpListener::bind("127.0.0.1:0").map_err(|error| format!("cannot find a free port: {error}"))?;
    listener.local_addr().map(|address| address.port()).map_err(|error| error.to_string())
}

fn set_mode(path: &Path, mode: u32) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
        .map_err(|error| format!("cannot set permissions of {}: {error}", path.display()))
}
