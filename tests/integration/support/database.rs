//! One database per test, dropped when the test ends, with the accounts
//! made for it.

use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use mysql::prelude::Queryable;
use mysql::{Opts, OptsBuilder, Pool, PoolConstraints, PoolOpts, PooledConn};

use super::flavor::Program;
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

/// A database of its own for one test, dropped when the test ends, with
/// any account made for it.
pub struct Database {
    server: &'static Server,
    name: String,
    opts: Opts,
    pool: Pool,
    users: Mutex<Vec<String>>,
}

impl Database {
    /// Creates an empty utf8mb4 database on the server of the running test.
    pub fn new() -> Self {
        Self::with_charset("utf8mb4")
    }

    /// Creates an empty database whose default character set is `charset`,
    /// as a DBA's may be: every text variable without one of its own takes it.
    pub fn with_charset(charset: &str) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let server = current();
        let name = format!("sc_test_{}_{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        server
            .admin_conn()
            .query_drop(format!("CREATE DATABASE `{name}` CHARACTER SET {charset}"))
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
        Database { server, name, opts, pool, users: Mutex::new(Vec::new()) }
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

impl Drop for Database {
    fn drop(&mut self) {
        // Never panic here: this may run while a failed test unwinds.
        if let Ok(mut conn) = mysql::Conn::new(self.server.opts.clone()) {
            let _ = conn.query_drop(format!("DROP DATABASE IF EXISTS `{}`", self.name));
            for user in self.users.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner()).iter() {
                let _ = conn.query_drop(format!("DROP USER IF EXISTS {user}"));
            }
        }
    }
}
