//! The engines that run no stored routine, which the plain mode serves,
//! booted once per run from the builds `scripts/test` makes of their Go
//! modules (`engines/`): TiDB v8.5.6 on its embedded storage (unistore: no
//! PD, no TiKV), and Vitess v0.24.4's `vttestserver`, a vtgate over
//! keyspaces of two shards each, on the MySQL 9.7 of the chroot. Each is
//! stopped when the test binary exits, as the servers are.

use std::env;
use std::fs;
use std::path::Path;
use std::process::{Child, Command};
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use mysql::{Conn, Opts, OptsBuilder};
use slotted_counters::PackageOptions;
use slotted_counters_cli::{render, script};

use super::Release;
use super::server::{free_port, guard};
use crate::reconcile::SOURCE_TABLES;

/// An engine the plain mode serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    Tidb,
    Vitess,
}

impl Engine {
    /// Boots the engine unless it runs: a test that times its calls boots
    /// it first.
    pub fn boot(self) {
        match self {
            Engine::Tidb => drop(tidb()),
            Engine::Vitess => drop(vitess()),
        }
    }

    /// The URL of an empty database named `name` holding the plain tables
    /// of the default package and the reconcile tests' posts and comments
    /// ([`SOURCE_TABLES`]), on this engine (booted on first use). On Vitess,
    /// `name` is one of [`KEYSPACES`], its counters' tables emptied.
    pub fn database(self, name: &str) -> String {
        match self {
            Engine::Tidb => tidb().database(name),
            Engine::Vitess => vitess().keyspace(name),
        }
    }
}

/// Declares each listed test once per engine, as `<test>::tidb` and
/// `<test>::vitess`; the test takes the [`Engine`] it runs on.
macro_rules! on_each_engine {
    ($($test:ident),* $(,)?) => {
        $(mod $test {
            #[test]
            fn tidb() {
                let _timed = $crate::support::timing::Timed::start();
                super::$test($crate::support::engines::Engine::Tidb)
            }
            #[test]
            fn vitess() {
                let _timed = $crate::support::timing::Timed::start();
                super::$test($crate::support::engines::Engine::Vitess)
            }
        })*
    };
}
pub(crate) use on_each_engine;

/// The URL parameter that keeps a client on TCP: by default the mysql crate
/// moves to the server's socket, past the proxy a test puts between them.
const OVER_TCP: &str = "prefer_socket=false";

/// What a test says where an engine is missing.
const BUILD_HINT: &str = "run scripts/test, which builds TiDB and Vitess from engines/ and names them";

/// How long an engine may take to answer after its start.
const START_TIMEOUT: Duration = Duration::from_secs(180);

/// A tidb-server on unistore, shared by the run.
struct Tidb {
    port: u16,
    /// Held in a static, never dropped: its stdin closing at exit stops the server.
    _guardian: Child,
}

/// The run's TiDB. A boot that failed fails every test that needs it, at
/// once, with its reason.
fn tidb() -> &'static Tidb {
    static TIDB: OnceLock<Result<Tidb, String>> = OnceLock::new();
    TIDB.get_or_init(Tidb::boot).as_ref().unwrap_or_else(|problem| panic!("cannot start TiDB: {problem}"))
}

impl Tidb {
    fn boot() -> Result<Tidb, String> {
        let server = env::var("SLOTTED_COUNTERS_TIDB_SERVER")
            .map_err(|_| format!("SLOTTED_COUNTERS_TIDB_SERVER names no tidb-server: {BUILD_HINT}"))?;
        let dir = tempfile::Builder::new()
            .prefix("slotted-counters-tidb-")
            .tempdir()
            .map_err(|error| format!("cannot create a folder: {error}"))?
            .keep();
        let (port, status) = (free_port()?, free_port()?);
        let path = |name: &str| dir.join(name).display().to_string();
        let command: Vec<_> = [
            server,
            "--store=unistore".into(),
            format!("--path={}", path("data")),
            format!("--temp-dir={}", path("tmp")),
            format!("--socket={}", path("tidb.sock")),
            // Else in the working folder.
            format!("--log-slow-query={}", path("slow.log")),
            "--host=127.0.0.1".into(),
            format!("-P={port}"),
            "--status-host=127.0.0.1".into(),
            format!("--status={status}"),
        ]
        .into_iter()
        .map(Into::into)
        .collect();
        let mut guardian = guard(&dir, &command, &[])?;
        let opts = probe_opts(port);
        wait_for(&mut guardian, &dir, "TiDB", || {
            Conn::new(opts.clone()).map(drop).map_err(|e| e.to_string())
        })?;
        Ok(Tidb { port, _guardian: guardian })
    }

    fn database(&self, name: &str) -> String {
        let url = format!("mysql://root@127.0.0.1:{}/{name}?{OVER_TCP}", self.port);
        let mut conn =
            Conn::new(Opts::from_url(&format!("mysql://root@127.0.0.1:{}?{OVER_TCP}", self.port)).unwrap())
                .expect("connect to TiDB");
        conn.query_drop(format!("DROP DATABASE IF EXISTS `{name}`")).unwrap();
        conn.query_drop(format!("CREATE DATABASE `{name}`")).unwrap();
        conn.query_drop(format!("USE `{name}`")).unwrap();
        script::run(&mut conn, &plain_tables()).unwrap();
        super::server::run_each(&mut conn, &SOURCE_TABLES).unwrap();
        url
    }
}

/// The keyspaces of the Vitess cluster, each sharded in two with the
/// package's `vschema.json` (posts and comments by the post) and holding its
/// plain tables: one per test.
pub const KEYSPACES: &[&str] = &["script", "quota", "sale", "cuts", "reconcile", "install"];

/// A vttestserver in the MySQL chroot, shared by the run.
struct Vitess {
    /// vtgate's MySQL port.
    port: u16,
    _guardian: Child,
}

/// The run's Vitess, as [`tidb`].
fn vitess() -> &'static Vitess {
    static VITESS: OnceLock<Result<Vitess, String>> = OnceLock::new();
    VITESS
        .get_or_init(Vitess::boot)
        .as_ref()
        .unwrap_or_else(|problem| panic!("cannot start Vitess: {problem}"))
}

impl Vitess {
    /// The user and group, not root, that Vitess runs as in the chroot:
    /// `vitess`, which `scripts/test` adds to it.
    const USERSPEC: &str = "1500:1500";

    fn boot() -> Result<Vitess, String> {
        let root = env::var("SLOTTED_COUNTERS_VITESS_ROOT")
            .map_err(|_| format!("SLOTTED_COUNTERS_VITESS_ROOT names no Vitess build: {BUILD_HINT}"))?;
        let release = Release::MySql;
        let dir = release.visible_tempdir("slotted-counters-vitess-")?.keep();
        let tables = format!("{}\n{};\n", plain_tables(), SOURCE_TABLES.join(";\n"));
        let vschema = vschema()?;
        for keyspace in KEYSPACES {
            let schema = dir.join("schema").join(keyspace);
            fs::create_dir_all(&schema)
                .map_err(|error| format!("cannot create {}: {error}", schema.display()))?;
            write(&schema.join("tables.sql"), &tables)?;
            write(&schema.join("vschema.json"), &vschema)?;
        }
        fs::create_dir(dir.join("data"))
            .map_err(|error| format!("cannot create the data folder: {error}"))?;
        super::flavor::run(Command::new("chown").args(["-R", Self::USERSPEC]).arg(&dir))?;

        let base = free_ports(4)?;
        let inner = |name: &str| release.inner_path(&dir.join(name)).display().to_string();
        let chroot = release.root()?.ok_or("MySQL runs in no chroot")?;
        let shards = vec!["2"; KEYSPACES.len()].join(",");
        let command: Vec<_> = [
            "chroot".to_owned(),
            format!("--userspec={}", Self::USERSPEC),
            chroot.display().to_string(),
            "/usr/bin/env".into(),
            format!("VTROOT={root}"),
            format!("VTDATAROOT={}", inner("data")),
            "VT_MYSQL_ROOT=/usr".into(),
            format!("HOME={}", inner("data")),
            format!("{root}/bin/vttestserver"),
            format!("--port={base}"),
            "--mysql-bind-host=127.0.0.1".into(),
            "--vtcombo-bind-host=127.0.0.1".into(),
            format!("--keyspaces={}", KEYSPACES.join(",")),
            format!("--num-shards={shards}"),
            "--replica-count=1".into(),
            "--rdonly-count=0".into(),
            format!("--schema-dir={}", inner("schema")),
        ]
        .into_iter()
        .map(Into::into)
        .collect();
        let mut guardian = guard(&dir, &command, &[])?;
        // vtgate serves MySQL at the fourth port (vttest's
        // PortForProtocol); it answers once every keyspace's schema loaded.
        let port = base + 3;
        let opts = probe_opts(port);
        wait_for(&mut guardian, &dir, "Vitess", || {
            let mut conn = Conn::new(opts.clone()).map_err(|error| error.to_string())?;
            KEYSPACES.iter().try_for_each(|keyspace| {
                conn.query_drop(format!("SELECT 1 FROM `{keyspace}`.counters LIMIT 1"))
                    .map_err(|e| e.to_string())
            })
        })?;
        Ok(Vitess { port, _guardian: guardian })
    }

    fn keyspace(&self, name: &str) -> String {
        assert!(KEYSPACES.contains(&name), "no keyspace {name} in the Vitess cluster: add it to KEYSPACES");
        let url = format!("mysql://root@127.0.0.1:{}/{name}?{OVER_TCP}", self.port);
        let mut conn = Conn::new(Opts::from_url(&url).unwrap()).expect("connect to vtgate");
        for table in ["counters", "counter_writes", "counter_periods", "counter_buckets"] {
            conn.query_drop(format!("DELETE FROM {table}")).unwrap();
        }
        url
    }
}

/// Options to ask an engine that may not answer yet whether it does: a
/// half-started one must not hold the wait past [`START_TIMEOUT`].
fn probe_opts(port: u16) -> OptsBuilder {
    OptsBuilder::new()
        .ip_or_hostname(Some("127.0.0.1"))
        .tcp_port(port)
        .user(Some("root"))
        .prefer_socket(false)
        .tcp_connect_timeout(Some(Duration::from_secs(5)))
        .read_timeout(Some(Duration::from_secs(10)))
}

/// The default package's committed VSchema, with the posts sharded by
/// their id and each comment on the shard of the counter that counts it
/// (the counters' vindex on its `counter_name`).
fn vschema() -> Result<String, String> {
    let path = super::in_project("generated/vschema.json");
    let committed =
        fs::read_to_string(&path).map_err(|error| format!("cannot read {}: {error}", path.display()))?;
    let mut vschema: serde_json::Value =
        serde_json::from_str(&committed).map_err(|error| format!("{}: {error}", path.display()))?;
    vschema["vindexes"]["post"] = serde_json::json!({ "type": "hash" });
    vschema["tables"]["posts"] =
        serde_json::json!({ "column_vindexes": [{ "column": "id", "name": "post" }] });
    vschema["tables"]["comments"] =
        serde_json::json!({ "column_vindexes": [{ "column": "counter_name", "name": "counter_name" }] });
    Ok(vschema.to_string())
}

fn plain_tables() -> String {
    render::plain_tables_sql(&PackageOptions::default())
        .unwrap()
        .expect("the plain mode serves the default package")
}

fn write(path: &Path, contents: &str) -> Result<(), String> {
    fs::write(path, contents).map_err(|error| format!("cannot write {}: {error}", path.display()))
}

/// The first of `count` free TCP ports in a row.
fn free_ports(count: u16) -> Result<u16, String> {
    for _ in 0..100 {
        let base = free_port()?;
        if base < u16::MAX - count
            && (1..count).all(|offset| std::net::TcpListener::bind(("127.0.0.1", base + offset)).is_ok())
        {
            return Ok(base);
        }
    }
    Err(format!("found no {count} free ports in a row"))
}

/// Waits until `up` succeeds, or fails with the end of the engine's log
/// when it exits or does not answer within [`START_TIMEOUT`].
fn wait_for(
    guardian: &mut Child,
    dir: &Path,
    engine: &str,
    mut up: impl FnMut() -> Result<(), String>,
) -> Result<(), String> {
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        let Err(error) = up() else { return Ok(()) };
        let exited = matches!(guardian.try_wait(), Ok(Some(_)));
        if exited || Instant::now() > deadline {
            // Its folder goes with it: the log's end is in the error.
            let log = fs::read_to_string(dir.join("server.log")).unwrap_or_default();
            let lines: Vec<&str> = log.lines().collect();
            let tail = lines[lines.len().saturating_sub(40)..].join("\n");
            let what = if exited { "exited during startup" } else { "did not answer in time" };
            return Err(format!("{engine} {what} ({error}); its log ends:\n{tail}"));
        }
        thread::sleep(Duration::from_millis(200));
    }
}
