//! A three-node MariaDB Galera cluster on loopback, booted by the tests that
//! need one and stopped when they drop it (or when the test binary exits).
//!
//! As `shared/guides/galera.md` found: every node runs as the `mysql` user
//! (the joiners' rsync state transfer fails as root), the first starts with
//! `--wsrep-new-cluster`, the others join one at a time, and every port,
//! Galera's own included, is on 127.0.0.1.

use std::path::Path;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;

use super::flavor::{Release, SETUP_HINT};
use super::server::{Booted, Launch, free_port};

/// Galera's provider library, from Debian's galera-4 package.
const PROVIDER: &str = "/usr/lib/galera/libgalera_smm.so";

/// Nodes of the cluster, node 1 first.
pub struct Cluster {
    nodes: Vec<Booted>,
    /// Whether each node is running: [`Cluster::stop`] stops one.
    running: Vec<bool>,
}

impl Cluster {
    /// Boots three nodes and waits until all are synced. A boot that fails
    /// is reported and tried once more on fresh ports: a joiner's state
    /// transfer failed once in about a dozen boots here ("Will never receive
    /// state"), and the suite should not fail for the test bed.
    pub fn boot() -> Cluster {
        assert!(
            Path::new(PROVIDER).exists(),
            "no Galera provider at {PROVIDER}: apt-get install galera-4 rsync, or {SETUP_HINT}"
        );
        match Cluster::try_boot() {
            Ok(cluster) => cluster,
            Err(problem) => {
                eprintln!("booting the Galera cluster failed, booting it again on fresh ports: {problem}");
                Cluster::try_boot().unwrap_or_else(|problem| panic!("{problem}"))
            }
        }
    }

    fn try_boot() -> Result<Cluster, String> {
        let mut ports: Vec<[u16; 3]> = Vec::new();
        for _ in 0..3 {
            ports.push([free_port()?, free_port()?, free_port()?]);
        }
        let members: Vec<String> = ports.iter().map(|[group, ..]| format!("127.0.0.1:{group}")).collect();
        let mut nodes = Vec::new();
        for (index, [group, incremental, snapshot]) in ports.iter().enumerate() {
            let config = format!(
                "server-id={id}\n\
                 binlog_format=ROW\n\
                 innodb_autoinc_lock_mode=2\n\
                 wsrep_on=ON\n\
                 wsrep_provider={PROVIDER}\n\
                 wsrep_cluster_name=slotted_counters_test\n\
                 wsrep_cluster_address=gcomm://{members}\n\
                 wsrep_node_name=node{id}\n\
                 wsrep_node_address=127.0.0.1:{group}\n\
                 wsrep_provider_options=\"base_host=127.0.0.1;base_port={group};\
                 gmcast.listen_addr=tcp://127.0.0.1:{group};ist.recv_addr=127.0.0.1:{incremental};gcache.size=64M\"\n\
                 wsrep_sst_method=rsync\n\
                 wsrep_sst_receive_address=127.0.0.1:{snapshot}\n\
                 wsrep_slave_threads=2",
                id = index + 1,
                members = members.join(","),
            );
            let first = index == 0;
            let launch = Launch {
                release: Release::MariaDb,
                config: &config,
                as_mysql_user: true,
                server_args: if first { &["--wsrep-new-cluster"] } else { &[] },
                create_user: false,
                durable: false,
            };
            let node = Booted::launch(&launch)
                .map_err(|problem| format!("cannot boot Galera node {}: {problem}", index + 1))?;
            wait_until_synced(&node, index + 1)?;
            if first {
                node.create_test_user()?;
            }
            nodes.push(node);
        }
        let running = vec![true; nodes.len()];
        Ok(Cluster { nodes, running })
    }

    /// Node `number`, 1 to 3.
    pub fn node(&self, number: usize) -> &Booted {
        &self.nodes[number - 1]
    }

    /// The running nodes, node 1 first.
    pub fn nodes(&self) -> Vec<&Booted> {
        self.nodes.iter().zip(&self.running).filter(|(_, running)| **running).map(|(node, _)| node).collect()
    }

    /// Shuts node `number` down, as an operator would, and waits until the
    /// others are synced as a smaller cluster.
    pub fn stop(&mut self, number: usize) {
        self.nodes[number - 1].shut_down();
        self.running[number - 1] = false;
        self.wait_until_synced();
    }

    /// Starts node `number` again after [`Cluster::stop`]: it rejoins with a
    /// state transfer, and every node is synced again.
    pub fn rejoin(&mut self, number: usize) {
        self.nodes[number - 1].restart();
        self.running[number - 1] = true;
        self.wait_until_synced();
    }

    fn wait_until_synced(&self) {
        let nodes = self.nodes();
        for node in &nodes {
            wait_until_synced(node, nodes.len()).unwrap_or_else(|problem| panic!("{problem}"));
        }
    }
}

impl Drop for Cluster {
    /// Stops the nodes last first, so the first does not wait for lost peers.
    fn drop(&mut self) {
        while self.nodes.pop().is_some() {}
    }
}

/// Waits until `node` says it is synced with a cluster of `size` nodes. A
/// joiner may drop connections while it receives its state transfer.
fn wait_until_synced(node: &Booted, size: usize) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(120);
    let synced = || -> Result<bool, mysql::Error> {
        let mut conn = mysql::Conn::new(node.root_opts())?;
        let state: Option<(String, String)> =
            conn.query_first("SHOW STATUS LIKE 'wsrep_local_state_comment'")?;
        let members: Option<(String, String)> = conn.query_first("SHOW STATUS LIKE 'wsrep_cluster_size'")?;
        Ok(state.is_some_and(|(_, state)| state == "Synced")
            && members.is_some_and(|(_, members)| members == size.to_string()))
    };
    loop {
        let outcome = synced();
        if let Ok(true) = outcome {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "Galera node on port {} did not sync with {size} nodes within 120 s: {outcome:?}",
                node.port
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
