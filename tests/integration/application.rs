//! What an application that only counts compiles: one plain dependency line
//! on the client crate brings none of the generator's, the benchmark's or
//! the command line's crates, nor the async client's (feature `sqlx`), and
//! few crates in all.

use std::path::Path;
use std::process::Command;

use crate::support::{stderr, stdout};

/// Crates that only the generator, the benchmark or the command need.
const TOOL_ONLY: [&str; 8] =
    ["slotted-counters-cli", "askama", "clap", "indicatif", "plotters", "rand", "similar", "tempfile"];

/// Crates that only the async client (feature `sqlx`) needs.
const ASYNC_ONLY: [&str; 4] = ["sqlx", "sqlx-core", "sqlx-mysql", "tokio"];

/// Most crates the client may bring into an application, itself included.
const CRATE_BUDGET: usize = 100;

#[test]
fn client_only_application_builds_without_tool_dependencies() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("application/Cargo.toml");
    let cargo = |args: &[&str]| {
        Command::new(env!("CARGO"))
            .args(args)
            .arg("--manifest-path")
            .arg(&manifest)
            .env("CARGO_TARGET_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("application"))
            .output()
            .expect("run cargo")
    };

    let tree = cargo(&["tree", "--edges", "normal", "--prefix", "none", "--format", "{p}"]);
    assert!(tree.status.success(), "{}", stderr(&tree));
    let crates: Vec<String> =
        stdout(&tree).lines().filter_map(|line| line.split_whitespace().next()).map(str::to_owned).collect();
    for needed in ["slotted-counters", "mysql", "thiserror"] {
        assert!(crates.iter().any(|name| name == needed), "{needed} missing from {crates:?}");
    }
    for unwanted in TOOL_ONLY.into_iter().chain(ASYNC_ONLY) {
        assert!(!crates.iter().any(|name| name == unwanted), "the client pulls in {unwanted}: {crates:?}");
    }

    let mut distinct = crates.clone();
    distinct.sort();
    distinct.dedup();
    distinct.retain(|name| name != "counting-application");
    assert!(distinct.len() <= CRATE_BUDGET, "the client brings {} crates: {distinct:?}", distinct.len());

    let build = cargo(&["build", "--quiet"]);
    assert!(build.status.success(), "{}", stderr(&build));
}
