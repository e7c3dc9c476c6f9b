//! What an application that only counts sees and compiles: a scratch
//! application written against the client's public API compiles with one
//! plain dependency line, bringing none of the generator's, the
//! benchmark's or the command line's crates, nor the async client's
//! (feature `sqlx`), and few crates in all; its tokio twin, with the async
//! client alone, compiles no `mysql` crate. The root of the client's
//! documentation lists only what an application reads.
//!
//! A test binary of its own, which needs no server: `.ci/run` runs it
//! (`cargo test -p slotted-counters-tests --test applications`) beside its
//! other compile checks, and `cargo test` leaves it out, so that the live
//! suite spends no time compiling the applications' crates.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Crates that only the generator, the benchmark or the command need.
const TOOL_ONLY: [&str; 8] =
    ["slotted-counters-cli", "askama", "clap", "indicatif", "plotters", "rand", "similar", "tempfile"];

/// Crates that only the async client (feature `sqlx`) needs.
const ASYNC_ONLY: [&str; 4] = ["sqlx", "sqlx-core", "sqlx-mysql", "tokio"];

/// Most crates the client may bring into an application, itself included
/// (99 today: its events go through `log`, which the TLS crates bring
/// anyway, where `tracing` brought three more).
const CRATE_BUDGET: usize = 100;

/// The items at the root of the client's documentation, as rustdoc names
/// their pages: what an application reads. The clients, the builder they
/// share and their coalescing handles, what a call takes (periods and what
/// they keep among it), the errors, the retry budget, and the options an
/// application matches to its package.
const APPLICATION_ITEMS: [&str; 25] = [
    "enum.Bound",
    "enum.Cluster",
    "enum.ConfigError",
    "enum.Correction",
    "enum.CounterError",
    "enum.ErrorKind",
    "enum.Keep",
    "enum.Period",
    "enum.RetryBudget",
    "enum.RoomOf",
    "enum.StartDate",
    "struct.AsyncCoalescing",
    "struct.AsyncCounters",
    "struct.ClientBuilder",
    "struct.Coalescing",
    "struct.Counters",
    "struct.Drift",
    "struct.FlushStats",
    "struct.NewCounter",
    "struct.PackageOptions",
    "struct.Reconcile",
    "struct.Room",
    "struct.UtcOffset",
    "type.AsyncCountersOn",
    "type.CountersOn",
];

/// The items kept in modules, out of an application's way: in
/// `connections`, where the clients run their calls (they fill the
/// clients' type parameters); in `defaults`, the figures the clients start
/// from; in `options`, the builder and what it takes beyond the root's.
const MODULE_ITEMS: [&str; 19] = [
    "connections/struct.AsyncOnConnection",
    "connections/struct.AsyncPooled",
    "connections/struct.OnConnection",
    "connections/struct.Pooled",
    "connections/trait.AsyncConnections",
    "connections/trait.SyncConnections",
    "defaults/constant.CHECK_KEPT_AFTER",
    "defaults/constant.COUNTERS_PER_FLUSH",
    "defaults/constant.FLUSHES",
    "defaults/constant.KEPT_CONNECTIONS",
    "defaults/constant.POOL_TIMEOUT",
    "defaults/constant.RECONCILE_WAIT",
    "defaults/constant.REINSTALL_WINDOW",
    "defaults/constant.SERIES_LIMIT",
    "defaults/constant.SLOT_COUNT_LIFETIME",
    "defaults/constant.WRITE_ID_WINDOW",
    "options/enum.SlotChoice",
    "options/enum.SlotPolicy",
    "options/struct.PackageOptionsBuilder",
];

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn cargo(args: &[&str], manifest: &Path, target: &str) -> Output {
    Command::new(env!("CARGO"))
        .args(args)
        .arg("--manifest-path")
        .arg(manifest)
        .env("CARGO_TARGET_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join(target))
        .output()
        .expect("run cargo")
}

/// Compiles the application at `manifest` as `cargo check` does: what an
/// application's code can get wrong against the client shows there, and
/// leaving out code generation and linking, which the workspace's own build
/// already does for these crates, halves the time the suite spends on it.
fn compile(manifest: &Path) -> Output {
    cargo(&["check", "--quiet"], manifest, "application")
}

fn application(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(name).join("Cargo.toml")
}

/// The distinct crates the application `name` compiles, itself aside.
fn crates_of(name: &str) -> Vec<String> {
    let tree = cargo(
        &["tree", "--edges", "normal", "--prefix", "none", "--format", "{p}"],
        &application(name),
        name,
    );
    assert!(tree.status.success(), "{}", stderr(&tree));
    let mut crates: Vec<String> =
        stdout(&tree).lines().filter_map(|line| line.split_whitespace().next()).map(str::to_owned).collect();
    crates.sort();
    crates.dedup();
    crates.retain(|crate_name| !crate_name.starts_with("counting-"));
    crates
}

#[test]
fn client_only_application_compiles_without_tool_dependencies() {
    let crates = crates_of("application");
    for needed in ["slotted-counters", "slotted-counters-core", "mysql", "thiserror"] {
        assert!(crates.iter().any(|name| name == needed), "{needed} missing from {crates:?}");
    }
    for unwanted in TOOL_ONLY.into_iter().chain(ASYNC_ONLY) {
        assert!(!crates.iter().any(|name| name == unwanted), "the client pulls in {unwanted}: {crates:?}");
    }
    assert!(crates.len() <= CRATE_BUDGET, "the client brings {} crates: {crates:?}", crates.len());

    let check = compile(&application("application"));
    assert!(check.status.success(), "{}", stderr(&check));
}

/// The tokio application depends on the client without its default
/// features, with `sqlx`: it compiles no `mysql` crate, and builds the
/// async client's calls, made the way the sync application makes its own.
#[test]
fn an_async_only_application_compiles_no_mysql_crate() {
    let crates = crates_of("async-application");
    for needed in ASYNC_ONLY.into_iter().chain(["slotted-counters"]) {
        assert!(crates.iter().any(|name| name == needed), "{needed} missing from {crates:?}");
    }
    // sqlx's MySQL driver brings rand itself (for RSA authentication).
    for unwanted in TOOL_ONLY.into_iter().filter(|&name| name != "rand").chain(["mysql", "mysql_common"]) {
        assert!(
            !crates.iter().any(|name| name == unwanted),
            "the async client pulls in {unwanted}: {crates:?}"
        );
    }
    // The same target folder as the sync application's: the crates both
    // compile alike are built once.
    let check = compile(&application("async-application"));
    assert!(check.status.success(), "{}", stderr(&check));
}

#[test]
fn the_clients_root_documents_only_what_an_application_reads() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
    let doc = cargo(
        &["doc", "--quiet", "-p", "slotted-counters", "--features", "sqlx", "--no-deps"],
        &workspace,
        "doc",
    );
    assert!(doc.status.success(), "{}", stderr(&doc));
    let index = Path::new(env!("CARGO_TARGET_TMPDIR")).join("doc/doc/slotted_counters/all.html");
    let index =
        std::fs::read_to_string(&index).unwrap_or_else(|error| panic!("{}: {error}", index.display()));
    let (_, items) = index.split_once("id=\"main-content\"").expect("rustdoc's list of items");
    let listed: BTreeSet<&str> = items
        .split("href=\"")
        .skip(1)
        .filter_map(|link| link.split_once(".html\"").map(|(page, _)| page))
        .collect();
    let (in_modules, at_root): (BTreeSet<&str>, BTreeSet<&str>) =
        listed.into_iter().partition(|page| page.contains('/'));
    assert_eq!(at_root, BTreeSet::from(APPLICATION_ITEMS), "the root lists what an application reads");
    assert_eq!(in_modules, BTreeSet::from(MODULE_ITEMS));
}
