//! The two servers the suite runs on, and where each one's programs are.
//!
//! MariaDB comes from Debian's packages, on this machine's PATH. MySQL has no
//! Debian 12 package: its server and clients come from Debian's unstable
//! archive, installed by debootstrap into a chroot (`scripts/test` builds
//! it), and run inside it. A path the server or a client must read is then
//! a path inside the chroot: [`Flavor::visible_tempdir`] and
//! [`Flavor::inner_path`] make and translate them.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::{env, fs};

use mysql::Opts;

/// How to get what the tests need.
pub const SETUP_HINT: &str = "run `scripts/test`, which installs MariaDB, Galera, PyMySQL, Java and a MySQL \
     chroot and then runs the tests (see CONTRIBUTING.md)";

/// Which server: the suite runs every server-agnostic live test on each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    MariaDb,
    MySql,
}

/// A program a test runs, named per server.
#[derive(Debug, Clone, Copy)]
pub enum Program {
    /// `mariadbd` or `mysqld`.
    Server,
    /// The command-line client a DBA sources `setup.sql` with.
    Client,
    /// `mariadb-dump` or `mysqldump`.
    Dump,
}

impl Flavor {
    /// The server's name as its vendor spells it.
    pub fn name(self) -> &'static str {
        match self {
            Flavor::MariaDb => "MariaDB",
            Flavor::MySql => "MySQL",
        }
    }

    /// The flavor of a server that reports `version` (`SELECT VERSION()`).
    pub fn of_version(version: &str) -> Flavor {
        if version.contains("MariaDB") { Flavor::MariaDb } else { Flavor::MySql }
    }

    /// The folder MySQL's chroot is in: `MYSQL_TEST_CHROOT`, or a cache
    /// folder outside the repository (as `scripts/test` builds it).
    pub fn mysql_chroot() -> PathBuf {
        if let Some(root) = env::var_os("MYSQL_TEST_CHROOT") {
            return PathBuf::from(root);
        }
        let cache = env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
            .unwrap_or_else(env::temp_dir);
        cache.join("slotted-counters").join("mysql-chroot")
    }

    /// The root the server's programs run in: `None` for the host.
    fn root(self) -> Result<Option<PathBuf>, String> {
        match self {
            Flavor::MariaDb => Ok(None),
            Flavor::MySql => {
                let root = Self::mysql_chroot();
                if root.join("usr/sbin/mysqld").is_file() {
                    Ok(Some(root))
                } else {
                    Err(format!(
                        "no MySQL server in {} (MYSQL_TEST_CHROOT, or its default): {SETUP_HINT}",
                        root.display()
                    ))
                }
            }
        }
    }

    /// A command that runs `program`, inside the chroot for MySQL.
    pub fn command(self, program: Program) -> Result<Command, String> {
        let name = match (self, program) {
            (Flavor::MariaDb, Program::Server) => "mariadbd",
            (Flavor::MariaDb, Program::Client) => "mariadb",
            (Flavor::MariaDb, Program::Dump) => "mariadb-dump",
            (Flavor::MySql, Program::Server) => "mysqld",
            (Flavor::MySql, Program::Client) => "mysql",
            (Flavor::MySql, Program::Dump) => "mysqldump",
        };
        match self.root()? {
            None => {
                let binary =
                    find_binary(&[name]).ok_or_else(|| format!("no {name} found on PATH; {SETUP_HINT}"))?;
                Ok(Command::new(binary))
            }
            Some(root) => {
                let binary = ["usr/sbin", "usr/bin"]
                    .iter()
                    .map(|folder| Path::new("/").join(folder).join(name))
                    .find(|inner| root.join(inner.strip_prefix("/").unwrap_or(inner)).is_file())
                    .ok_or_else(|| format!("no {name} in {}; {SETUP_HINT}", root.display()))?;
                let mut command = Command::new("chroot");
                command.arg(&root).arg(binary);
                Ok(command)
            }
        }
    }

    /// `program` (client or dump) logged in over TCP as the account `opts`
    /// names, with a utf8mb4 connection as applications have.
    pub fn client(self, program: Program, opts: &Opts) -> Command {
        let mut command = self.command(program).unwrap_or_else(|problem| panic!("{problem}"));
        command
            .arg("--no-defaults")
            .arg("--protocol=TCP")
            .arg(format!("--host={}", opts.get_ip_or_hostname()))
            .arg(format!("--port={}", opts.get_tcp_port()))
            .arg(format!("--user={}", opts.get_user().unwrap_or_default()))
            .arg("--default-character-set=utf8mb4")
            .env("MYSQL_PWD", opts.get_pass().unwrap_or_default());
        command
    }

    /// A new folder that this flavor's programs can read and write, removed
    /// when dropped: under the chroot's `/tmp` for MySQL.
    pub fn visible_tempdir(self, prefix: &str) -> Result<tempfile::TempDir, String> {
        let parent = match self.root()? {
            None => env::temp_dir(),
            Some(root) => root.join("tmp"),
        };
        fs::create_dir_all(&parent)
            .map_err(|error| format!("cannot create {}: {error}", parent.display()))?;
        tempfile::Builder::new()
            .prefix(prefix)
            .tempdir_in(&parent)
            .map_err(|error| format!("cannot create a folder in {}: {error}", parent.display()))
    }

    /// `path` (a host path in a [`Flavor::visible_tempdir`]) as this
    /// flavor's programs see it.
    pub fn inner_path(self, path: &Path) -> PathBuf {
        match self.root() {
            Ok(Some(root)) => match path.strip_prefix(&root) {
                Ok(inner) => Path::new("/").join(inner),
                Err(_) => panic!("{} is outside the MySQL chroot {}", path.display(), root.display()),
            },
            _ => path.to_owned(),
        }
    }

    /// Makes the data folder `datadir` for a server configured by `config`
    /// (host paths; MySQL reads both from the file), run as `user`.
    pub fn initialize(self, config: &Path, datadir: &Path, tmpdir: &Path, user: &str) -> Result<(), String> {
        let mut command = match self {
            Flavor::MariaDb => {
                let install_db = find_binary(&["mariadb-install-db"])
                    .ok_or_else(|| format!("no mariadb-install-db found on PATH; {SETUP_HINT}"))?;
                let mut command = Command::new(install_db);
                command
                    .arg("--no-defaults")
                    .arg(format!("--datadir={}", datadir.display()))
                    .arg(format!("--tmpdir={}", tmpdir.display()))
                    .arg(format!("--user={user}"))
                    .args(["--auth-root-authentication-method=normal", "--skip-test-db"]);
                command
            }
            // root@localhost without a password, as mariadb-install-db's
            // `normal` method makes it.
            Flavor::MySql => {
                let mut command = self.command(Program::Server)?;
                command
                    .arg(format!("--defaults-file={}", self.inner_path(config).display()))
                    .arg("--initialize-insecure");
                command
            }
        };
        run(&mut command)
    }

    /// Settings one server needs and the other does not know.
    pub fn own_settings(self) -> &'static str {
        match self {
            Flavor::MariaDb => "",
            // X Protocol would take a second port; the chroot has no
            // /var/lib/mysql-files, which the default secure-file-priv needs.
            Flavor::MySql => "mysqlx=OFF\nsecure-file-priv=\n",
        }
    }
}

impl fmt::Display for Flavor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Runs `command` and reports its output when it fails.
pub fn run(command: &mut Command) -> Result<(), String> {
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

/// Looks for the first of `names` on PATH and in the usual sbin folders.
pub fn find_binary(names: &[&str]) -> Option<PathBuf> {
    let path = env::var_os("PATH").unwrap_or_default();
    let folders: Vec<PathBuf> =
        env::split_paths(&path).chain(["/usr/sbin", "/usr/local/sbin"].map(PathBuf::from)).collect();
    names.iter().find_map(|name| folders.iter().map(|folder| folder.join(name)).find(|path| path.is_file()))
}
