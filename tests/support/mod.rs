//! The live-test harness: one real MariaDB server per test binary, and one
//! database per test.
//!
//! Without `MYSQL_TEST_URL`, the first test that asks for a database boots a
//! throwaway server: `mariadb-install-db` into a temporary folder, then
//! `mariadbd` on a free loopback port with binary logging and durable commits,
//! as production runs it. A small shell guardian owns the server and holds a
//! pipe from this process: when the test binary exits, however it exits, the
//! pipe closes and the guardian stops the server and removes its folder.
//!
//! With `MYSQL_TEST_URL=mysql://user:pass@host:port/`, every test runs on that
//! server instead (a MySQL 8 you have, say); the user must be able to create
//! and drop databases.
#![allow(dead_code)] // Each test binary uses its own part of the harness.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};
use std::{env, fs};

use mysql::prelude::Queryable;
use mysql::{Opts, OptsBuilder, Pool, PoolConstraints, PoolOpts, PooledConn};

/// How to get a server when none is configured.
const INSTALL_HINT: &str = "install MariaDB (`apt-get install mariadb-server mariadb-client`) \
     so the tests can boot their own server, or set MYSQL_TEST_URL=mysql://user:password@host:port/ \
     to run them against an existing MySQL 8+ or MariaDB 10.6+ server";

/// The account the tests use on a booted server (root may only log in by socket).
const TEST_USER: &str = "slotted";
const TEST_PASSWORD: &str = "slotted-test";

/// Stops the server when this process goes away: EOF on stdin means the test
/// binary has exited, whether it finished, panicked or was killed.
const GUARDIAN: &str = r#"
exec 3<&0
"$1" --defaults-file="$2/my.cnf" >"$2/server.log" 2>&1 &
server=$!
( read -r _ <&3; kill "$server" 2>/dev/null ) &
watcher=$!
wait "$server"
# The server stopped by itself: keep its folder so the log can be read.
if kill -0 "$watcher" 2>/dev/null; then exit 1; fi
rm -rf "$2"
"#;

/// A server the tests can use, booted or given.
pub struct Server {
    /// Options to reach it as a user who may create databases; no database selected.
    opts: Opts,
    /// The booted server's guardian. Held, never waited for: dropping it at
    /// exit is what stops the server.
    _guardian: Option<Mutex<Child>>,
}

/// The server of this test binary, booted on first use.
pub fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| match env::var("MYSQL_TEST_URL") {
        Ok(url) => {
            let opts = Opts::from_url(&url)
                .unwrap_or_else(|error| panic!("MYSQL_TEST_URL is not a valid URL: {error}"));
            Server { opts, _guardian: None }
        }
        Err(_) => {
            boot().unwrap_or_else(|problem| panic!("cannot start a MariaDB server for the tests: {problem}"))
        }
    })
}

impl Server {
    /// The server's version string, as `SELECT VERSION()` reports it.
    pub fn version(&self) -> String {
        let mut conn = mysql::Conn::new(self.opts.clone()).expect("connect to the test server");
        conn.query_first("SELECT VERSION()").expect("query the version").unwrap_or_default()
    }

    fn admin_conn(&self) -> mysql::Conn {
        mysql::Conn::new(self.opts.clone()).expect("connect to the test server")
    }
}

fn boot() -> Result<Server, String> {
    let mariadbd =
        find_binary(&["mariadbd", "mysqld"]).ok_or_else(|| format!("no mariadbd found; {INSTALL_HINT}"))?;
    let install_db = find_binary(&["mariadb-install-db", "mysql_install_db"])
        .ok_or_else(|| format!("no mariadb-install-db found; {INSTALL_HINT}"))?;
    let dir = tempfile::Builder::new()
        .prefix("slotted-counters-mariadb-")
        .tempdir()
        .map_err(|error| format!("cannot create a folder for the server: {error}"))?
        .keep();
    let datadir = dir.join("data");
    let socket = dir.join("mysqld.sock");

    let output = Command::new(&install_db)
        .arg("--no-defaults")
        .arg(format!("--datadir={}", datadir.display()))
        .args(["--auth-root-authentication-method=normal", "--skip-test-db"])
        .output()
        .map_err(|error| format!("cannot run {}: {error}", install_db.display()))?;
    if !output.status.success() {
        return Err(format!(
            "{} failed: {}{}",
            install_db.display(),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ));
    }

    let port = free_port()?;
    let config = format!(
        "[mariadbd]\n\
         datadir={datadir}\n\
         socket={socket}\n\
         pid-file={dir}/mariadbd.pid\n\
         port={port}\n\
         bind-address=127.0.0.1\n\
         skip-name-resolve\n\
         user=root\n\
         log-bin={dir}/binlog\n\
         server-id=1\n\
         innodb_flush_log_at_trx_commit=1\n\
         sync_binlog=1\n\
         max_connections=1000\n",
        datadir = datadir.display(),
        socket = socket.display(),
        dir = dir.display(),
    );
    let config_path = dir.join("my.cnf");
    fs::write(&config_path, config)
        .map_err(|error| format!("cannot write {}: {error}", config_path.display()))?;
    // The server ignores a world-writable config file.
    set_mode(&config_path, 0o600)?;

    let mut guardian = Command::new("sh")
        .args(["-c", GUARDIAN, "slotted-counters-guardian"])
        .arg(&mariadbd)
        .arg(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|error| format!("cannot start sh: {error}"))?;

    let root = OptsBuilder::new().socket(Some(socket.display().to_string())).user(Some("root"));
    let mut conn = wait_until_up(&mut guardian, root, &dir)?;
    conn.query_drop(format!(
        "CREATE USER '{TEST_USER}'@'127.0.0.1' IDENTIFIED BY '{TEST_PASSWORD}';
         GRANT ALL ON *.* TO '{TEST_USER}'@'127.0.0.1' WITH GRANT OPTION"
    ))
    .map_err(|error| format!("cannot create the test user: {error}"))?;

    let opts = OptsBuilder::new()
        .ip_or_hostname(Some("127.0.0.1"))
        .tcp_port(port)
        .user(Some(TEST_USER))
        .pass(Some(TEST_PASSWORD))
        .prefer_socket(false);
    Ok(Server { opts: opts.into(), _guardian: Some(Mutex::new(guardian)) })
}

/// Polls until the server accepts a connection, or reports why it never will.
fn wait_until_up(guardian: &mut Child, opts: OptsBuilder, dir: &Path) -> Result<mysql::Conn, String> {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        match mysql::Conn::new(opts.clone()) {
            Ok(conn) => return Ok(conn),
            Err(error) => {
                if let Ok(Some(_)) = guardian.try_wait() {
                    let log = fs::read_to_string(dir.join("server.log")).unwrap_or_default();
                    let _ = fs::remove_dir_all(dir);
                    let tail: Vec<&str> = log.lines().rev().take(15).collect();
                    let tail: Vec<&str> = tail.into_iter().rev().collect();
                    return Err(format!(
                        "the server exited during startup; its log ends:\n{}",
                        tail.join("\n")
                    ));
                }
                if Instant::now() > deadline {
                    return Err(format!("the server did not answer within 120 s: {error}"));
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

fn free_port() -> Result<u16, String> {
    let listener =
        TcpListener::bind("127.0.0.1:0").map_err(|error| format!("cannot find a free port: {error}"))?;
    listener.local_addr().map(|address| address.port()).map_err(|error| error.to_string())
}

fn set_mode(path: &Path, mode: u32) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
        .map_err(|error| format!("cannot set permissions of {}: {error}", path.display()))
}

/// Looks for the first of `names` on PATH and in the usual sbin folders.
pub fn find_binary(names: &[&str]) -> Option<PathBuf> {
    let path = env::var_os("PATH").unwrap_or_default();
    let folders: Vec<PathBuf> = env::split_paths(&path)
        .chain(["/usr/sbin", "/usr/local/sbin", "/usr/local/mysql/bin"].map(PathBuf::from))
        .collect();
    names.iter().find_map(|name| folders.iter().map(|folder| folder.join(name)).find(|path| path.is_file()))
}

/// Runs a query that reads `information_schema.innodb_trx`.
///
/// The server answers such queries from a cache that it refreshes only when
/// it has not been read for 100 ms: polled faster, it returns stale rows
/// forever. So every read in this process goes through here, one at a time,
/// at least 150 ms after the one before.
pub fn read_innodb_trx<T: mysql::prelude::FromRow>(conn: &mut PooledConn, sql: &str) -> Option<T> {
    static LAST_READ: Mutex<Option<Instant>> = Mutex::new(None);
    let mut last_read = LAST_READ.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(previous) = *last_read {
        std::thread::sleep(Duration::from_millis(150).saturating_sub(previous.elapsed()));
    }
    let row = conn.query_first(sql).unwrap_or_else(|error| panic!("{sql}: {error}"));
    *last_read = Some(Instant::now());
    row
}

/// Every routine of a package with a slot count per counter, by name.
pub const ROUTINES: [&str; 9] = [
    "counter_add",
    "counter_compact",
    "counter_delete",
    "counter_estimate",
    "counter_get",
    "counter_increment",
    "counter_reset",
    "counter_resize",
    "counter_setup",
];

/// The routines of a package, by name: a fixed-slot package has no resize.
pub fn routines(fixed_slots: bool) -> Vec<&'static str> {
    ROUTINES.into_iter().filter(|&routine| !(fixed_slots && routine == "counter_resize")).collect()
}

/// Runs the `slotted-counters` binary as an operator would, with no
/// `DATABASE_URL` from the test's own environment.
pub fn slotted_counters(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_slotted-counters"))
        .args(args)
        .env_remove("DATABASE_URL")
        .output()
        .expect("run slotted-counters")
}

/// A database of its own for one test, dropped when the test ends, with
/// any account made for it.
pub struct Database {
    name: String,
    opts: Opts,
    pool: Pool,
    users: Mutex<Vec<String>>,
}

impl Database {
    /// Creates an empty database on the test server.
    pub fn new() -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let server = server();
        let name = format!("sc_test_{}_{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        server
            .admin_conn()
            .query_drop(format!("CREATE DATABASE `{name}` CHARACTER SET utf8mb4"))
            .unwrap_or_else(|error| panic!("cannot create database {name}: {error}"));
        let opts: Opts = OptsBuilder::from_opts(server.opts.clone())
            .db_name(Some(&name))
            .pool_opts(
                PoolOpts::default()
                    .with_constraints(PoolConstraints::new(0, 300).expect("valid constraints")),
            )
            .into();
        let pool =
            Pool::new(opts.clone()).unwrap_or_else(|error| panic!("cannot connect to {name}: {error}"));
        Database { name, opts, pool, users: Mutex::new(Vec::new()) }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    pub fn conn(&self) -> PooledConn {
        self.pool.get_conn().expect("connection to the test database")
    }

    /// `mysql://user:password@host:port/database` for this database.
    pub fn url(&self) -> String {
        self.url_as(self.opts.get_user().unwrap_or_default(), self.opts.get_pass().unwrap_or_default())
    }

    /// The URL of this database for another account.
    pub fn url_as(&self, user: &str, password: &str) -> String {
        format!(
            "mysql://{user}:{password}@{}:{}/{}",
            self.opts.get_ip_or_hostname(),
            self.opts.get_tcp_port(),
            self.name
        )
    }

    /// Creates an account that has every privilege on this database and
    /// none on the server (no SUPER), and returns its URL. The account is
    /// dropped with the database.
    pub fn unprivileged_user(&self) -> String {
        let user = format!("app_{}", self.name.trim_start_matches("sc_test_"));
        let host = if self.opts.get_ip_or_hostname() == "127.0.0.1" { "127.0.0.1" } else { "%" };
        server()
            .admin_conn()
            .query_drop(format!(
                "CREATE USER '{user}'@'{host}' IDENTIFIED BY 'app-password';
                 GRANT ALL ON `{}`.* TO '{user}'@'{host}'",
                self.name
            ))
            .unwrap_or_else(|error| panic!("cannot create user {user}: {error}"));
        self.users.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(format!("'{user}'@'{host}'"));
        self.url_as(&user, "app-password")
    }

    /// A `mariadb` (or `mysql`) client command connected to this database.
    pub fn client(&self) -> Command {
        let binary = find_binary(&["mariadb", "mysql"])
            .unwrap_or_else(|| panic!("no mariadb client found; {INSTALL_HINT}"));
        let mut command = Command::new(binary);
        command
            .arg("--no-defaults")
            .arg("--protocol=TCP")
            .arg(format!("--host={}", self.opts.get_ip_or_hostname()))
            .arg(format!("--port={}", self.opts.get_tcp_port()))
            .arg(format!("--user={}", self.opts.get_user().unwrap_or_default()))
            .arg(format!("--database={}", self.name))
            .env("MYSQL_PWD", self.opts.get_pass().unwrap_or_default());
        command
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        // Never panic here: this may run while a failed test unwinds.
        if let Ok(mut conn) = mysql::Conn::new(server().opts.clone()) {
            let _ = conn.query_drop(format!("DROP DATABASE IF EXISTS `{}`", self.name));
            for user in self.users.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner()).iter() {
                let _ = conn.query_drop(format!("DROP USER IF EXISTS {user}"));
            }
        }
    }
}
