//! The test server: booted once per `cargo test` run, or given.
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

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};
use std::{env, fs};

use mysql::prelude::Queryable;
use mysql::{Opts, OptsBuilder};

/// How to get a server when none is configured.
pub const INSTALL_HINT: &str = "install MariaDB (`apt-get install mariadb-server mariadb-client`) \
     so the tests can boot their own server, or set MYSQL_TEST_URL=mysql://user:password@host:port/ \
     to run them against an existing MySQL 8+ or MariaDB 10.6+ server";

/// The account the tests use on a booted server (root may only log in by socket).
const TEST_USER: &str = "slotted";
const TEST_PASSWORD: &str = "slotted-test";

/// Stops the server when this process goes away: EOF on stdin means the test
/// binary has exited, whether it finished, panicked or was killed.
/// Arguments: the server binary, its folder, then arguments for this start.
const GUARDIAN: &str = r#"
exec 3<&0
binary=$1
dir=$2
shift 2
"$binary" --defaults-file="$dir/my.cnf" "$@" >"$dir/server.log" 2>&1 &
server=$!
( read -r _ <&3; kill "$server" 2>/dev/null ) &
watcher=$!
wait "$server"
# The server stopped by itself: keep its folder so the log can be read.
if kill -0 "$watcher" 2>/dev/null; then exit 1; fi
rm -rf "$dir"
"#;

/// A server the tests can use, booted or given.
pub struct Server {
    /// Options to reach it as a user who may create databases; no database selected.
    pub(super) opts: Opts,
    /// The booted server. Held in a static, never dropped: its guardian's
    /// stdin closing at exit is what stops it.
    _booted: Option<Mutex<Booted>>,
}

/// The server of this test run, booted on first use.
pub fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| match env::var("MYSQL_TEST_URL") {
        Ok(url) => {
            let opts = Opts::from_url(&url)
                .unwrap_or_else(|error| panic!("MYSQL_TEST_URL is not a valid URL: {error}"));
            Server { opts, _booted: None }
        }
        Err(_) => {
            let booted = Booted::start("")
                .unwrap_or_else(|problem| panic!("cannot start a MariaDB server for the tests: {problem}"));
            Server { opts: booted.opts.clone(), _booted: Some(Mutex::new(booted)) }
        }
    })
}

impl Server {
    pub(super) fn admin_conn(&self) -> mysql::Conn {
        mysql::Conn::new(self.opts.clone()).expect("connect to the test server")
    }
}

/// How to boot a server beyond the common settings.
pub struct Launch<'a> {
    /// Lines of the `[mariadbd]` group; a setting here overrides the common one.
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
}

impl Default for Launch<'_> {
    fn default() -> Self {
        Launch { config: "", as_mysql_user: false, server_args: &[], create_user: true }
    }
}

/// Runs `command` and reports its output when it fails.
fn run(command: &mut Command) -> Result<(), String> {
    let output = command.output().map_err(|error| format!("cannot run {command:?}: {error}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{command:?} failed: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

/// A MariaDB server booted by this process, with its folder and guardian.
pub struct Booted {
    /// Options to reach it over TCP as the test user; no database selected.
    pub opts: Opts,
    pub port: u16,
    pub dir: PathBuf,
    mariadbd: PathBuf,
    guardian: Child,
}

impl Booted {
    /// Installs a fresh data folder and starts `mariadbd` on it, with
    /// binary logging and durable commits plus `extra_config` (lines of the
    /// `[mariadbd]` group), and creates the test user.
    pub fn start(extra_config: &str) -> Result<Booted, String> {
        Self::launch(&Launch { config: extra_config, ..Launch::default() })
    }

    /// Boots a server as `launch` says.
    pub fn launch(launch: &Launch<'_>) -> Result<Booted, String> {
        let mariadbd = find_binary(&["mariadbd", "mysqld"])
            .ok_or_else(|| format!("no mariadbd found; {INSTALL_HINT}"))?;
        let install_db = find_binary(&["mariadb-install-db", "mysql_install_db"])
            .ok_or_else(|| format!("no mariadb-install-db found; {INSTALL_HINT}"))?;
        let dir = tempfile::Builder::new()
            .prefix("slotted-counters-mariadb-")
            .tempdir()
            .map_err(|error| format!("cannot create a folder for the server: {error}"))?
            .keep();
        let datadir = dir.join("data");
        // Each server a temporary folder of its own: a starting server
        // removes every `#sql*` file in its tmpdir, another's included.
        let tmpdir = dir.join("tmp");
        fs::create_dir(&tmpdir).map_err(|error| format!("cannot create {}: {error}", tmpdir.display()))?;
        let user = if launch.as_mysql_user {
            // The mysql user must reach its folders, and own them.
            set_mode(&dir, 0o755)?;
            run(Command::new("chown").arg("mysql:mysql").arg(&dir).arg(&tmpdir))?;
            "mysql"
        } else {
            "root"
        };

        run(Command::new(&install_db)
            .arg("--no-defaults")
            .arg(format!("--datadir={}", datadir.display()))
            .arg(format!("--tmpdir={}", tmpdir.display()))
            .arg(format!("--user={user}"))
            .args(["--auth-root-authentication-method=normal", "--skip-test-db"]))?;
        if launch.as_mysql_user {
            // Its binary log, socket and pid file live beside the data.
            run(Command::new("chown").arg("-R").arg("mysql:mysql").arg(&dir))?;
        }

        let port = free_port()?;
        let config = format!(
            "[mariadbd]\n\
             datadir={datadir}\n\
             tmpdir={tmpdir}\n\
             socket={dir}/mysqld.sock\n\
             pid-file={dir}/mariadbd.pid\n\
             port={port}\n\
             bind-address=127.0.0.1\n\
             skip-name-resolve\n\
             user={user}\n\
             log-bin={dir}/binlog\n\
             server-id=1\n\
             innodb_flush_log_at_trx_commit=1\n\
             sync_binlog=1\n\
             max_connections=1000\n\
             {extra_config}\n",
            datadir = datadir.display(),
            tmpdir = tmpdir.display(),
            dir = dir.display(),
            extra_config = launch.config,
        );
        let config_path = dir.join("my.cnf");
        fs::write(&config_path, config)
            .map_err(|error| format!("cannot write {}: {error}", config_path.display()))?;
        // The server ignores a world-writable config file; Galera's state
        // transfer, run as the mysql user, reads it too.
        set_mode(&config_path, 0o644)?;

        let guardian = guard(&mariadbd, &dir, launch.server_args)?;
        let mut booted = Booted { opts: Opts::default(), port, dir, guardian, mariadbd };
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

    /// Kills the server with SIGKILL, as a crash would, and waits until it is gone.
    pub fn kill9(&mut self) {
        let pid = fs::read_to_string(self.dir.join("mariadbd.pid")).expect("read the server's pid file");
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
        self.guardian = guard(&self.mariadbd, &self.dir, &[]).expect("restart the server");
        self.wait_until_up().expect("the server comes back after a crash");
    }

    /// Polls until the server accepts a connection, or reports why it never will.
    fn wait_until_up(&mut self) -> Result<(), String> {
        let root = self.root_opts();
        wait_until_up(&mut self.guardian, root, &self.dir)
    }
}

impl Drop for Booted {
    /// Stops the server and removes its folder: EOF on the guardian's stdin.
    fn drop(&mut self) {
        drop(self.guardian.stdin.take());
        let _ = self.guardian.wait();
    }
}

/// Starts `mariadbd` on the folder `dir` under a guardian that stops it
/// when this process closes the guardian's stdin, however it exits.
fn guard(mariadbd: &Path, dir: &Path, server_args: &[&str]) -> Result<Child, String> {
    Command::new("sh")
        .args(["-c", GUARDIAN, "slotted-counters-guardian"])
        .arg(mariadbd)
        .arg(dir)
        .args(server_args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|error| format!("cannot start sh: {error}"))
}

/// Polls until the server accepts a connection, or reports why it never will.
fn wait_until_up(guardian: &mut Child, opts: OptsBuilder, dir: &Path) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        match mysql::Conn::new(opts.clone()) {
            Ok(_) => return Ok(()),
            Err(error) => {
                if let Ok(Some(_)) = guardian.try_wait() {
                    let log = fs::read_to_string(dir.join("server.log")).unwrap_or_default();
                    let _ = fs::remove_dir_all(dir);
                    let tail: Vec<&str> = log.lines().rev().take(60).collect();
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

/// Looks for the first of `names` on PATH and in the usual sbin folders.
pub fn find_binary(names: &[&str]) -> Option<PathBuf> {
    let path = env::var_os("PATH").unwrap_or_default();
    let folders: Vec<PathBuf> = env::split_paths(&path)
        .chain(["/usr/sbin", "/usr/local/sbin", "/usr/local/mysql/bin"].map(PathBuf::from))
        .collect();
    names.iter().find_map(|name| folders.iter().map(|folder| folder.join(name)).find(|path| path.is_file()))
}
