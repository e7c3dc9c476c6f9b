//! A three-member MySQL Group Replication group in multi-primary mode on
//! loopback, booted by the tests that need one and stopped when they drop it
//! (or when the test binary exits).
//!
//! As `shared/guides/mysql.md` found: the plugin's options take the
//! `loose-` prefix (`mysqld --initialize` does not load the plugin and would
//! abort on them), the test account is made on each member with binary
//! logging off before it joins, so no member carries a transaction the
//! others lack, the first member bootstraps the group and the others join it.

use std::time::{Duration, Instant};

use mysql::prelude::Queryable;

use super::flavor::Release;
use super::server::{Booted, Launch, TEST_PASSWORD, TEST_USER, free_port};

/// The members of the group, member 1 first.
pub struct Group {
    members: Vec<Booted>,
    /// Whether each member is in the group: [`Group::leave`] takes one out.
    joined: Vec<bool>,
}

impl Group {
    /// Boots three members with `server_ids` and waits until all are
    /// ONLINE. A boot that fails is reported and tried once more on fresh
    /// ports, as the Galera cluster's is: the suite should not fail for the
    /// test bed.
    pub fn boot(server_ids: [u32; 3]) -> Group {
        match Group::try_boot(server_ids) {
            Ok(group) => group,
            Err(problem) => {
                eprintln!(
                    "booting the Group Replication group failed, booting it again on fresh ports: {problem}"
                );
                Group::try_boot(server_ids).unwrap_or_else(|problem| panic!("{problem}"))
            }
        }
    }

    fn try_boot(server_ids: [u32; 3]) -> Result<Group, String> {
        let ports = [free_port()?, free_port()?, free_port()?];
        let seeds: Vec<String> = ports.iter().map(|port| format!("127.0.0.1:{port}")).collect();
        // A group name of its own per boot, made of the first port's digits.
        let group_name = format!("5107dc0e-0000-4000-8000-{:012}", ports[0]);
        let mut members = Vec::new();
        for (port, server_id) in ports.iter().zip(server_ids) {
            let config = format!(
                "server-id={server_id}\n\
                 report-host=127.0.0.1\n\
                 gtid-mode=ON\n\
                 enforce-gtid-consistency=ON\n\
                 plugin-load-add=group_replication.so\n\
                 loose-group_replication_group_name={group_name}\n\
                 loose-group_replication_start_on_boot=OFF\n\
                 loose-group_replication_local_address=127.0.0.1:{port}\n\
                 loose-group_replication_group_seeds={seeds}\n\
                 loose-group_replication_single_primary_mode=OFF\n\
                 loose-group_replication_enforce_update_everywhere_checks=ON\n\
                 loose-group_replication_ip_allowlist=127.0.0.1/8\n\
                 loose-group_replication_recovery_get_public_key=ON",
                seeds = seeds.join(","),
            );
            let launch = Launch { config: &config, durable: false, ..Launch::new(Release::MySql) };
            let member = Booted::launch(&launch)
                .map_err(|problem| format!("cannot boot group member {}: {problem}", members.len() + 1))?;
            members.push(member);
        }
        let mut group = Group { joined: vec![false; members.len()], members };
        for number in 1..=group.members.len() {
            group.join(number)?;
        }
        Ok(group)
    }

    /// Member `number`, 1 to 3.
    pub fn member(&self, number: usize) -> &Booted {
        &self.members[number - 1]
    }

    /// The members in the group, member 1 first.
    pub fn members(&self) -> Vec<&Booted> {
        self.members
            .iter()
            .zip(&self.joined)
            .filter(|(_, joined)| **joined)
            .map(|(member, _)| member)
            .collect()
    }

    /// Takes member `number` out of the group (`STOP GROUP_REPLICATION`), as
    /// an operator would, and waits until the others are ONLINE without it.
    pub fn leave(&mut self, number: usize) {
        self.member(number).root_conn().query_drop("STOP GROUP_REPLICATION").expect("stop group replication");
        self.joined[number - 1] = false;
        self.wait_until_online().unwrap_or_else(|problem| panic!("{problem}"));
    }

    /// Brings member `number` back after [`Group::leave`]: it recovers what
    /// it missed from a donor, and every member is ONLINE again.
    pub fn rejoin(&mut self, number: usize) {
        self.join(number).unwrap_or_else(|problem| panic!("{problem}"));
    }

    /// Brings back every member that is out of the group.
    pub fn rejoin_every_member(&mut self) {
        for number in 1..=self.members.len() {
            if !self.joined[number - 1] {
                self.rejoin(number);
            }
        }
    }

    /// Gives the members `server_ids`, one member at a time: each whose id
    /// changes leaves, takes its new id and rejoins, so the group keeps
    /// serving throughout, as an operator would do it.
    pub fn set_server_ids(&mut self, server_ids: [u32; 3]) {
        for (index, server_id) in server_ids.into_iter().enumerate() {
            let current: u32 =
                self.members[index].root_conn().query_first("SELECT @@GLOBAL.server_id").unwrap().unwrap();
            if current != server_id {
                self.leave(index + 1);
                self.members[index]
                    .root_conn()
                    .query_drop(format!("SET GLOBAL server_id = {server_id}"))
                    .unwrap();
                self.rejoin(index + 1);
            }
        }
    }

    /// Starts Group Replication on member `number`, bootstrapping the group
    /// when no other member is in it, and waits until every member is
    /// ONLINE. The credentials are those of distributed recovery, with which
    /// a member that rejoins copies what it missed from a donor.
    fn join(&mut self, number: usize) -> Result<(), String> {
        let bootstrap = !self.joined.contains(&true);
        let start = format!("START GROUP_REPLICATION USER = '{TEST_USER}', PASSWORD = '{TEST_PASSWORD}'");
        let statements: Vec<&str> = if bootstrap {
            vec![
                "SET GLOBAL group_replication_bootstrap_group = ON",
                &start,
                "SET GLOBAL group_replication_bootstrap_group = OFF",
            ]
        } else {
            vec![&start]
        };
        let mut root = mysql::Conn::new(self.member(number).root_opts())
            .map_err(|error| format!("cannot connect to group member {number}: {error}"))?;
        for statement in statements {
            root.query_drop(statement)
                .map_err(|error| format!("group member {number}: {statement}: {error}"))?;
        }
        self.joined[number - 1] = true;
        self.wait_until_online()
    }

    /// Waits until every member in the group sees all of them ONLINE.
    fn wait_until_online(&self) -> Result<(), String> {
        let members = self.members();
        let deadline = Instant::now() + Duration::from_secs(120);
        for member in &members {
            let online = || -> Result<usize, mysql::Error> {
                let mut conn = mysql::Conn::new(member.root_opts())?;
                let online: Option<usize> = conn.query_first(
                    "SELECT COUNT(*) FROM performance_schema.replication_group_members WHERE MEMBER_STATE = 'ONLINE'",
                )?;
                Ok(online.unwrap_or(0))
            };
            loop {
                let outcome = online();
                if matches!(outcome, Ok(online) if online == members.len()) {
                    break;
                }
                if Instant::now() >= deadline {
                    let log = std::fs::read_to_string(member.dir.join("server.log")).unwrap_or_default();
                    let tail: Vec<&str> = log.lines().rev().take(30).collect();
                    return Err(format!(
                        "group member on port {} did not see {} members ONLINE within 120 s: {outcome:?}\n{}",
                        member.port,
                        members.len(),
                        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                    ));
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        Ok(())
    }
}

impl Drop for Group {
    /// Stops the members last first, so that the first does not wait for
    /// lost peers.
    fn drop(&mut self) {
        while self.members.pop().is_some() {}
    }
}
