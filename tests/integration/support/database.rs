//! The databases the live tests work in, with the accounts made for them.
//!
//! A test that only calls a package gets one of the run's shared databases
//! holding it ([`Database::shared`]): each package (its script, and the
//! database's character set) is installed once per server and run, and
//! handed to the next test that asks for it with its tables emptied. A
//! test may add tables of its own beside the package's, an application's,
//! dropped when it hands the database back. Then every object left is
//! compared with what the install made ([`Schema`]): a test that left a
//! definition changed (a routine, trigger, view, table, column, index,
//! constraint, event or grant) or added anything but tables fails, and the
//! database is dropped, never handed out again.
//! Such a test makes a database of its own ([`Database::new`]), dropped
//! when it ends.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use mysql::{Opts, OptsBuilder, Pool, PoolConstraints, PoolOpts, PooledConn};
use slotted_counters_cli::script;

use super::flavor::{Program, Release};
use super::schema::Schema;
use super::server::{Server, current};

/// An account a test made.
pub struct Account {
    /// `user@host`, as `--app-user` takes it.
    pub spec: String,
    /// `'user'@'host'`, as SQL names it.
    pub quoted: String,
    /// The URL of the test's database for this account.
    pub url: String,
}

/// A database for one test, with any account made for it: of the test's
/// own, dropped when the test ends, or a shared one, handed back.
pub struct Database {
    server: &'static Server,
    name: String,
    opts: Opts,
    /// Taken when the database is handed back, to close its connections.
    pool: Option<Pool>,
    users: Mutex<Vec<String>>,
    /// For a shared database: which package it holds, and what its install made.
    shared: Option<Installed>,
}

/// What a shared database holds: the package it was installed with, and the
/// objects that install made.
struct Installed {
    package: Package,
    schema: Schema,
}

/// A shared database's package: the script installed, on which server, in
/// a database of which character set.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Package {
    release: Release,
    script: u64,
    charset: u64,
}

/// A shared database no test holds now.
struct Idle {
    name: String,
    installed: Installed,
}

/// The shared databases no test holds now.
static IDLE: Mutex<Vec<Idle>> = Mutex::new(Vec::new());

impl Database {
    /// Creates an empty utf8mb4 database of the test's own on the server of
    /// the running test.
    pub fn new() -> Self {
        Self::with_charset("utf8mb4")
    }

    /// Creates an empty database of the test's own whose default character
    /// set is `charset`, as a DBA's may be: every text variable without one
    /// of its own takes it.
    pub fn with_charset(charset: &str) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let server = current();
        let name = format!("sc_test_{}_{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        server
            .admin_conn()
            .query_drop(format!("CREATE DATABASE `{name}` CHARACTER SET {charset}"))
            .unwrap_or_else(|error| panic!("cannot create database {name}: {error}"));
        Self::open(server, name)
    }

    /// The database `name` on `server`, with a pool of its own.
    fn open(server: &'static Server, name: String) -> Self {
        let opts: Opts = OptsBuilder::from_opts(server.opts.clone())
            .db_name(Some(&name))
            .pool_opts(
                PoolOpts::default()
                    .with_constraints(PoolConstraints::new(0, 300).expect("valid constraints")),
            )
            .into();
        let pool =
            Pool::new(opts.clone()).unwrap_or_else(|error| panic!("cannot connect to {name}: {error}"));
        Database { server, name, opts, pool: Some(pool), users: Mutex::new(Vec::new()), shared: None }
    }

    /// A shared database of a `charset` database holding what `script`
    /// installs, on the server of the running test, with its tables empty:
    /// for a test that changes no object of it (see the module's doc).
    pub fn shared(script: &str, charset: &str) -> Self {
        let server = current();
        let package = Package { release: server.release, script: digest(script), charset: digest(charset) };
        let idle = {
            let mut idle = IDLE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let found = idle.iter().position(|idle| idle.installed.package == package);
            found.map(|at| idle.swap_remove(at))
        };
        if let Some(Idle { name, installed }) = idle {
            let mut db = Self::open(server, name);
            db.shared = Some(installed);
            return db;
        }
        let mut db = Self::with_charset(charset);
        let mut conn = db.conn();
        script::run(&mut conn, script).unwrap_or_else(|error| panic!("cannot install the package: {error}"));
        let schema = Schema::read(&mut conn, &db.name).expect("read the installed package's objects");
        drop(conn);
        server.drop_at_exit(&db.name);
        db.shared = Some(Installed { package, schema });
        db
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn pool(&self) -> &Pool {
        self.pool.as_ref().expect("a database's pool lives as long as it")
    }

    pub fn conn(&self) -> PooledConn {
        self.pool().get_conn().expect("connection to the test database")
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
        self.account("app", &["ALL ON {db}.*"]).url
    }

    /// Creates the account `<role>_<database>` with `privileges` (GRANT
    /// clauses such as `"SELECT ON {db}.*"`, `{db}` standing for this
    /// database), dropped with the database.
    pub fn account(&self, role: &str, privileges: &[&str]) -> Account {
        let user = format!("{role}_{}", self.name.trim_start_matches("sc_test_"));
        let host = if self.opts.get_ip_or_hostname() == "127.0.0.1" { "127.0.0.1" } else { "%" };
        let quoted = format!("'{user}'@'{host}'");
        let mut conn = self.server.admin_conn();
        conn.query_drop(format!("CREATE USER {quoted} IDENTIFIED BY 'app-password'"))
            .unwrap_or_else(|error| panic!("cannot create user {quoted}: {error}"));
        self.users.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(quoted.clone());
        for privilege in privileges {
            let privilege = privilege.replace("{db}", &format!("`{}`", self.name));
            conn.query_drop(format!("GRANT {privilege} TO {quoted}"))
                .unwrap_or_else(|error| panic!("cannot grant {privilege} to {quoted}: {error}"));
        }
        Account { spec: format!("{user}@{host}"), url: self.url_as(&user, "app-password"), quoted }
    }

    /// The server's host and TCP port.
    pub fn address(&self) -> (String, u16) {
        (self.opts.get_ip_or_hostname().to_string(), self.opts.get_tcp_port())
    }

    /// The server's own command-line client (`mariadb` or `mysql`)
    /// connected to this database.
    pub fn client(&self) -> Command {
        self.client_as(&self.url())
    }

    /// The client connected to this database as the account `url` names.
    pub fn client_as(&self, url: &str) -> Command {
        let account = Opts::from_url(url).expect("a URL made by the tests");
        let mut command = self.server.release.client(Program::Client, &account);
        command.arg(format!("--database={}", self.name));
        command
    }

    /// The server's own load tester (`mariadb-slap` or `mysqlslap`),
    /// running its queries in this database, which it leaves in place.
    pub fn slap(&self) -> Command {
        let mut command =
            self.server.release.command(Program::Slap).unwrap_or_else(|problem| panic!("{problem}"));
        command
            .arg("--no-defaults")
            .arg("--protocol=TCP")
            .arg(format!("--host={}", self.opts.get_ip_or_hostname()))
            .arg(format!("--port={}", self.opts.get_tcp_port()))
            .arg(format!("--user={}", self.opts.get_user().unwrap_or_default()))
            .arg(format!("--create-schema={}", self.name))
            .arg("--no-drop")
            .env("MYSQL_PWD", self.opts.get_pass().unwrap_or_default());
        command
    }
}

impl Database {
    /// Closes this database's connections, drops the accounts made for it,
    /// ends every session still in it, drops the tables the test added,
    /// and checks that the objects left are the ones `installed` made:
    /// `Err` names what changed. The package's tables are emptied only
    /// once the check passed.
    fn hand_back(&mut self, conn: &mut mysql::Conn, installed: &Installed) -> Result<(), String> {
        drop(self.pool.take());
        self.drop_accounts(conn);
        conn.query_drop("SET SESSION lock_wait_timeout = 60, foreign_key_checks = 0")
            .map_err(|error| error.to_string())?;
        end_sessions_in(conn, &self.name)
            .map_err(|error| format!("cannot end the sessions in it: {error}"))?;
        let read = |conn: &mut mysql::Conn| {
            Schema::read(conn, &self.name).map_err(|error| format!("cannot read its objects: {error}"))
        };
        let added: Vec<String> = read(conn)?
            .tables()
            .iter()
            .filter(|table| !installed.schema.tables().contains(table))
            .map(|table| format!("`{}`.`{table}`", self.name))
            .collect();
        if !added.is_empty() {
            conn.query_drop(format!("DROP TABLE {}", added.join(", ")))
                .map_err(|error| format!("cannot drop the tables the test added: {error}"))?;
        }
        let now = read(conn)?;
        let changes = installed.schema.changes_to(&now);
        if !changes.is_empty() {
            return Err(format!(
                "the test changed the shared database {} (- what the install made, + what it holds now):\n{}\n\
                 A test that re-installs, uninstalls or alters a package, or adds anything but tables, \
                 works in a database of its own: Database::new(), then install.",
                self.name,
                changes.join("\n")
            ));
        }
        for table in now.tables() {
            conn.query_drop(format!("TRUNCATE TABLE `{}`.`{table}`", self.name))
                .map_err(|error| format!("cannot empty {table}: {error}"))?;
        }
        Ok(())
    }

    fn drop_accounts(&mut self, conn: &mut mysql::Conn) {
        for user in self.users.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner()).drain(..) {
            let _ = conn.query_drop(format!("DROP USER IF EXISTS {user}"));
        }
    }
}

impl Drop for Database {
    /// Hands a shared database back, or drops the database. A shared one
    /// that a failed test leaves, or that fails [`Database::hand_back`]'s
    /// check, is dropped too; the check's failure fails the test.
    fn drop(&mut self) {
        // Never panic but for the check: this may run while a failed test unwinds.
        let Ok(mut conn) = mysql::Conn::new(self.server.opts.clone()) else { return };
        let mut problem = None;
        if let Some(installed) = self.shared.take().filter(|_| !std::thread::panicking()) {
            match self.hand_back(&mut conn, &installed) {
                Ok(()) => {
                    let name = std::mem::take(&mut self.name);
                    IDLE.lock()
                        .unwrap_or_else(|poisoned| poisoned.into_inner())
                        .push(Idle { name, installed });
                    return;
                }
                Err(found) => problem = Some(found),
            }
        }
        let _ = conn.query_drop(format!("DROP DATABASE IF EXISTS `{}`", self.name));
        self.drop_accounts(&mut conn);
        if let Some(problem) = problem {
            panic!("{problem}");
        }
    }
}

/// Waits until no session but this one is in `database`: the test's
/// connections close as its pools and clients are dropped. Those still open
/// after a second, which a test left running or kept in a client that
/// outlives its database, are killed, rolling back what they hold, and
/// waited for.
fn end_sessions_in(conn: &mut mysql::Conn, database: &str) -> Result<(), String> {
    let started = Instant::now();
    let (kill_after, give_up_after) = (Duration::from_secs(1), Duration::from_secs(30));
    let mut killed = false;
    loop {
        let sessions: Vec<u64> = super::despite_emoji_elsewhere(|| {
            conn.exec(
                "SELECT ID FROM information_schema.PROCESSLIST WHERE DB = ? AND ID <> CONNECTION_ID()",
                (database,),
            )
        })
        .map_err(|error| error.to_string())?;
        if sessions.is_empty() {
            return Ok(());
        }
        if started.elapsed() > give_up_after {
            return Err(format!("sessions {sessions:?} outlived their KILL"));
        }
        if !killed && started.elapsed() > kill_after {
            for session in sessions {
                // It may have ended by itself meanwhile (1094, unknown thread).
                let _ = conn.query_drop(format!("KILL CONNECTION {session}"));
            }
            killed = true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A digest of `text`, to tell packages apart by their script.
fn digest(text: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}
