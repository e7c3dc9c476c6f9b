//! The servers the suite runs on, and where each one's programs are.
//!
//! [`Flavor`] is what a server behaves as, MariaDB or MySQL; [`Release`] is
//! which build the suite runs, and where it comes from. MariaDB 10.11 comes
//! from Debian 12's packages, on this machine's PATH. MariaDB 11.8 (what a
//! fresh Debian 13 installs) and MySQL 9.7 (Debian 12 has no MySQL server)
//! come from Debian's trixie and unstable archives, installed by debootstrap
//! into chroots of their own (`scripts/test` builds them), and run inside
//! them. A path the server or a client must read is then a path inside the
//! chroot: [`Release::visible_tempdir`] and [`Release::inner_path`] make and
//! translate them.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::{env, fs};

use mysql::Opts;

/// How to get what the tests need.
pub const SETUP_HINT: &str = "run `scripts/test`, which installs MariaDB, Galera, PyMySQL, Java, and MariaDB 11.8 \
     and MySQL chroots, and then runs the tests (see CONTRIBUTING.md)";

/// What a server behaves as: where the two differ, tests say so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    MariaDb,
    MySql,
}

impl Flavor {
    /// The server's name as its vendor spells it.
    pub fn name(self) -> &'static str {
        match self {
            Flavor::MariaDb => "MariaDB",
            Flavor::MySql => "MySQL",
        }
    }
}

impl fmt::Display for Flavor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which server build: the suite runs every server-agnostic live test on each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Release {
    /// MariaDB 10.11, Debian 12's.
    MariaDb,
    /// MariaDB 11.8, Debian 13's, in a chroot.
    MariaDb11,
    /// MySQL 9.7, Debian unstable's, in a chroot.
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
    /// `mariadb-slap` or `mysqlslap`, the load test of the 2012 package.
    Slap,
}

impl Release {
    /// What the server behaves as.
    pub fn flavor(self) -> Flavor {
        match self {
            Release::MariaDb | Release::MariaDb11 => Flavor::MariaDb,
            Release::MySql => Flavor::MySql,
        }
    }

    /// The release a server that reports `version` (`SELECT VERSION()`) stands for.
    pub fn of_version(version: &str) -> Release {
        match (version.contains("MariaDB"), version.split('.').next()) {
            (true, Some(major)) if major.parse::<u32>().is_ok_and(|major| major >= 11) => Release::MariaDb11,
            (true, _) => Release::MariaDb,
            (false, _) => Release::MySql,
        }
    }

    /// The chroot a release runs in, from its variable or a cache folder
    /// outside the repository (as `scripts/test` builds them); `None` for
    /// the host's.
    fn chroot(self) -> Option<PathBuf> {
        let (variable, folder) = match self {
            Release::MariaDb => return None,
            Release::MariaDb11 => ("MARIADB_11_TEST_CHROOT", "mariadb-11-chroot"),
            Release::MySql => ("MYSQL_TEST_CHROOT", "mysql-chroot"),
        };
        if let Some(root) = env::var_os(variable) {
            return Some(PathBuf::from(root));
        }
        let cache = env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
            .unwrap_or_else(env::temp_dir);
        Some(cache.join("slotted-counters").join(folder))
    }

    /// The root the server's programs run in: `None` for the host.
    pub fn root(self) -> Result<Option<PathBuf>, String> {
        let Some(root) = self.chroot() else { return Ok(None) };
        let server = self.program_name(Program::Server);
        if root.join("usr/sbin").join(server).is_file() {
            Ok(Some(root))
        } else {
            Err(format!("no {self} server in {}: {SETUP_HINT}", root.display()))
        }
    }

    fn program_name(self, program: Program) -> &'static str {
        match (self.flavor(), program) {
            (Flavor::MariaDb, Program::Server) => "mariadbd",
            (Flavor::MariaDb, Program::Client) => "mariadb",
            (Flavor::MariaDb, Program::Dump) => "mariadb-dump",
            (Flavor::MariaDb, Program::Slap) => "mariadb-slap",
            (Flavor::MySql, Program::Server) => "mysqld",
            (Flavor::MySql, Program::Client) => "mysql",
            (Flavor::MySql, Program::Dump) => "mysqldump",
            (Flavor::MySql, Program::Slap) => "mysqlslap",
        }
    }

    /// A command that runs `name`, inside the release's chroot if it has one.
    fn command_named(self, name: &str) -> Result<Command, String> {
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

    /// A command that runs `program`, inside the chroot where there is one.
    pub fn command(self, program: Program) -> Result<Command, String> {
        self.command_named(self.program_name(program))
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

    /// A new folder that this release's programs can read and write,
    /// removed when dropped: under the chroot's `/tmp` where there is one.
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

    /// `path` (a host path in a [`Release::visible_tempdir`]) as this
    /// release's programs see it.
    pub fn inner_path(self, path: &Path) -> PathBuf {
        match self.root() {
            Ok(Some(root)) => match path.strip_prefix(&root) {
                Ok(inner) => Path::new("/").join(inner),
                Err(_) => panic!("{} is outside the {self} chroot {}", path.display(), root.display()),
            },
            _ => path.to_owned(),
        }
    }

    /// Makes the data folder `datadir` for a server configured by `config`
    /// (host paths; MySQL reads both from the file), run as `user`.
    pub fn initialize(self, config: &Path, datadir: &Path, tmpdir: &Path, user: &str) -> Result<(), String> {
        let mut command = match self.flavor() {
            Flavor::MariaDb => {
                let mut command = self.command_named("mariadb-install-db")?;
                command
                    .arg("--no-defaults")
                    .arg(format!("--datadir={}", self.inner_path(datadir).display()))
                    .arg(format!("--tmpdir={}", self.inner_path(tmpdir).display()))
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
        match self.flavor() {
            Flavor::MariaDb => "",
            // X Protocol would take a second port; the chroot has no
            // /var/lib/mysql-files, which the default secure-file-priv needs.
            Flavor::MySql => "mysqlx=OFF\nsecure-file-priv=\n",
        }
    }
}

impl fmt::Display for Release {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Release::MariaDb => "MariaDB 10.11",
            Release::MariaDb11 => "MariaDB 11.8",
            Release::MySql => "MySQL",
        })
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
