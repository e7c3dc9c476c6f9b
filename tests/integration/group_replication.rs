//! A three-member MySQL Group Replication group booted by the tests: the
//! `--cluster group-replication` package installed on member 1 counts
//! exactly on every member under load from all three with no certification
//! conflict, whatever the members' server ids, and a reset erases every
//! increment acknowledged anywhere before it.

use std::thread;
use std::time::{Duration, Instant};

use mysql::Conn;
use mysql::prelude::Queryable;
use slotted_counters::sqlx::mysql::MySqlPoolOptions;
use slotted_counters::{AsyncCounters, Cluster, PackageOptions, RetryBudget};
use slotted_counters_core::package;

use crate::reconcile;
use crate::support::group_replication::Group;
use crate::support::multi_primary::{
    self, MultiPrimary, client, conn, increment_from_every_node, install, load_on_every_node, owned_slots,
    scenarios, slots_hit, totals_on_every_node,
};
use crate::support::server::Booted;
use crate::support::timing::Timed;
use crate::support::{self, ROUTINES, routines_in};

/// Boots the group (half a minute) and runs every scenario here on it in
/// turn ([`multi_primary::in_turn`]). Each works in databases of its own,
/// and gets every member in the group, whatever a failed scenario before it
/// left.
#[test]
fn every_scenario_on_one_group() {
    let _timed = Timed::start();
    let mut group = Group::boot([1, 2, 3]);
    multi_primary::in_turn(
        &mut group,
        Group::rejoin_every_member,
        &scenarios![
            reconciles_on_one_member_under_writes_on_the_others_leave_every_counter_exact,
            member_slots_count_exactly_on_every_member_without_conflicts_whatever_the_server_ids,
            batches_and_coalesced_increments_from_every_member_are_exact_without_conflicts,
            a_bounded_sale_from_every_member_sells_exactly_its_stock,
            a_quota_taken_from_every_member_lets_exactly_its_limit_through,
            periods_count_exactly_on_every_member_without_conflicts,
            the_async_client_rides_through_lost_certifications,
            every_member_increments_only_the_slots_of_its_rank_among_the_members,
            a_reset_erases_every_increment_acknowledged_on_another_member,
            re_installs_on_one_member_lose_nothing_the_others_write,
            a_transaction_a_remote_one_needs_fails_at_commit_alike_in_german_and_english,
            resizes_on_one_member_under_load_from_the_others_stay_exact,
            a_shrink_gives_the_session_its_own_consistency_back,
            member_slots_follow_a_member_that_leaves_and_rejoins,
            bench_over_every_member_reports_the_conflicts_member_slots_avoid,
        ],
    );
}

impl MultiPrimary for Group {
    /// Every transaction first waits until this member has applied all that
    /// the group ordered before it.
    const CAUSAL_READS: &'static str = "SET SESSION group_replication_consistency = 'BEFORE'";

    fn nodes(&self) -> Vec<&Booted> {
        self.members()
    }

    /// The certification conflicts each member has counted since it joined
    /// the group.
    fn conflicts(&self) -> Vec<u64> {
        self.members()
            .into_iter()
            .map(|member| {
                member
                    .root_conn()
                    .query_first(
                        "SELECT COUNT_CONFLICTS_DETECTED FROM performance_schema.replication_group_member_stats \
                         WHERE MEMBER_ID = @@GLOBAL.server_uuid",
                    )
                    .unwrap()
                    .expect("a member has a row of its own")
            })
            .collect()
    }

    /// Every member certifies every transaction, so over a time without
    /// joins each counts all of the group's conflicts, at its own pace: the
    /// most any member counted.
    fn conflicts_between(before: &[u64], after: &[u64]) -> u64 {
        after.iter().zip(before).map(|(after, before)| after - before).max().unwrap_or(0)
    }
}

fn group_replication() -> PackageOptions {
    PackageOptions::builder().cluster(Cluster::GroupReplication).build().unwrap()
}

/// A causal connection to `member`.
fn causal_conn(member: &Booted, database: &str) -> Conn {
    multi_primary::causal_conn::<Group>(member, database)
}

/// `per_client` plain `CALL counter_increment`s of `name` by `clients`
/// connections on every member, with no retry: any error, 3101 included,
/// fails the test. Returns the certification conflicts the load caused.
fn call_from_every_member(
    group: &Group,
    database: &str,
    name: &str,
    clients: usize,
    per_client: usize,
) -> u64 {
    load_on_every_node(group, database, clients, |member| {
        let mut conn = conn(member, database);
        for _ in 0..per_client {
            conn.exec_drop("CALL counter_increment(?)", (name,))
                .unwrap_or_else(|error| panic!("member on port {}: {error}", member.port));
        }
    })
}

/// Each member's `auto_increment_offset` modulo `auto_increment_increment`,
/// the position the group gives it by its server id.
fn offset_positions(group: &Group) -> Vec<u32> {
    group
        .members()
        .iter()
        .map(|member| {
            member
                .root_conn()
                .query_first("SELECT @@GLOBAL.auto_increment_offset % @@GLOBAL.auto_increment_increment")
                .unwrap()
                .unwrap()
        })
        .collect()
}

/// Reconciles on member 3 while members 1 and 2 write and drift: every
/// counter exact on every member. A member's snapshot holds a transaction
/// whole, its rows and its counter together.
fn reconciles_on_one_member_under_writes_on_the_others_leave_every_counter_exact(group: &mut Group) {
    reconcile::on_one_node_under_writes_on_the_others(&*group, "group_reconcile", &group_replication());
}

fn member_slots_count_exactly_on_every_member_without_conflicts_whatever_the_server_ids(group: &mut Group) {
    group.set_server_ids([1, 2, 3]);
    for (database, options) in
        [("default_load", PackageOptions::default()), ("group_load", group_replication())]
    {
        install(&*group, database, &options);
        conn(group.member(1), database).query_drop("CALL counter_setup('hot', 'd', 64, NULL)").unwrap();
        for member in group.members() {
            assert_eq!(routines_in(&mut causal_conn(member, database)), ROUTINES, "member {}", member.port);
        }
    }

    let load = (4, 250);
    let per_round = (3 * load.0 * load.1) as i64;
    let started = Instant::now();
    let default = increment_from_every_node(&*group, "default_load", "hot", load.0, load.1);
    let rate = per_round as f64 / started.elapsed().as_secs_f64();
    eprintln!("default package: {default} conflicts, {rate:.0} increments/s");
    assert_eq!(totals_on_every_node(&*group, "default_load", "hot"), [Some(per_round); 3]);
    assert!(default > 0, "the default package's random slots conflict between members");

    let mut expected = 0;
    for server_ids in [[1, 2, 3], [1, 8, 15]] {
        group.set_server_ids(server_ids);
        let positions = offset_positions(group);
        if server_ids == [1, 8, 15] {
            assert_eq!(positions, [1, 1, 1], "the group gives every member the same offset position");
        }
        let started = Instant::now();
        let conflicts = call_from_every_member(group, "group_load", "hot", load.0, load.1);
        let rate = per_round as f64 / started.elapsed().as_secs_f64();
        eprintln!("server ids {server_ids:?}: {conflicts} conflicts, {rate:.0} increments/s");
        expected += per_round;
        assert_eq!(totals_on_every_node(&*group, "group_load", "hot"), [Some(expected); 3], "{server_ids:?}");
        assert_eq!(conflicts, 0, "server ids {server_ids:?}: no two members write one row");
    }
}

/// Batches and coalesced increments on member slots: each member's
/// `counter_add_many` finds its rank once and writes only slots of its own,
/// as `counter_add` does.
fn batches_and_coalesced_increments_from_every_member_are_exact_without_conflicts(group: &mut Group) {
    group.set_server_ids([1, 8, 15]);
    let database = "group_batches";
    install(&*group, database, &group_replication());
    for name in ["a", "b", "c"] {
        conn(group.member(1), database).exec_drop("CALL counter_setup(?, 'd', 64, NULL)", (name,)).unwrap();
    }
    multi_primary::each_node_has_applied(&*group, database);

    let (clients, calls) = (3, 100);
    let before = MultiPrimary::conflicts(&*group);
    thread::scope(|scope| {
        for member in group.members() {
            let coalescing = client(member, database).coalescing();
            scope.spawn(move || {
                thread::scope(|scope| {
                    for _ in 0..clients {
                        scope.spawn(|| {
                            for _ in 0..calls {
                                coalescing.increment("c").unwrap();
                            }
                        });
                    }
                });
            });
            for _ in 0..clients {
                let mut conn = conn(member, database);
                scope.spawn(move || {
                    for _ in 0..calls {
                        conn.query_drop(r#"CALL counter_add_many('{"a": 1, "b": 2, "c": -1}')"#).unwrap();
                    }
                });
            }
        }
    });

    let new_conflicts: Vec<u64> = MultiPrimary::conflicts(&*group)
        .into_iter()
        .zip(before)
        .map(|(after, before)| after - before)
        .collect();
    assert_eq!(new_conflicts, [0; 3], "member slots: no two members write one row");
    let per_member = (clients * calls) as i64;
    assert_eq!(totals_on_every_node(&*group, database, "a"), [Some(3 * per_member); 3]);
    assert_eq!(totals_on_every_node(&*group, database, "b"), [Some(3 * 2 * per_member); 3]);
    assert_eq!(
        totals_on_every_node(&*group, database, "c"),
        [Some(0); 3],
        "+1 coalesced and -1 batched per call"
    );
}

/// A bounded counter sold from every member: exact, never below its
/// floor; the conflicts of the spreads are the bound's cost, each retried
/// by the client.
fn a_bounded_sale_from_every_member_sells_exactly_its_stock(group: &mut Group) {
    group.set_server_ids([1, 2, 3]);
    let conflicts = multi_primary::check_bounded_sale_sells_exactly_from_every_node(
        &*group,
        "group_bounds",
        &group_replication(),
    );
    eprintln!("a sale of 600 from 3 members: {conflicts} certification conflicts");
}

/// A quota taken from every member: exactly its limit gets through; the
/// conflicts on the quota's lock are its cost, each retried by the client.
fn a_quota_taken_from_every_member_lets_exactly_its_limit_through(group: &mut Group) {
    group.set_server_ids([1, 2, 3]);
    let conflicts = multi_primary::check_quota_lets_exactly_its_limit_through_from_every_node(
        &*group,
        "group_quota",
        &group_replication(),
    );
    eprintln!("a quota of 600 from 3 members: {conflicts} certification conflicts");
}

/// Counting per period on member slots: every bucket row a member writes
/// is of a slot of its own, so buckets, like totals, meet no conflict.
fn periods_count_exactly_on_every_member_without_conflicts(group: &mut Group) {
    group.set_server_ids([1, 2, 3]);
    let conflicts = multi_primary::check_periods_count_exactly_on_every_node(
        &*group,
        "group_periods",
        &group_replication(),
    );
    assert_eq!(conflicts, 0, "member slots: no two members write one bucket row");
}

/// The async client retries what the group rolls back (3101, and 1180 with
/// error 149) as the sync one does: the default package's random slots
/// conflict between members, and every increment still counts once.
fn the_async_client_rides_through_lost_certifications(group: &mut Group) {
    install(&*group, "group_async", &PackageOptions::default());
    conn(group.member(1), "group_async").query_drop("CALL counter_setup('hot', 'd', 8, NULL)").unwrap();
    multi_primary::each_node_has_applied(&*group, "group_async");
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build().unwrap();
    let before = MultiPrimary::conflicts(&*group);
    runtime.block_on(async {
        let mut tasks = Vec::new();
        for member in group.members() {
            let pool = MySqlPoolOptions::new().connect(&member.url("group_async")).await.unwrap();
            let counters = AsyncCounters::builder(pool)
                .retry(RetryBudget::Time(Duration::from_secs(60)))
                .build()
                .unwrap();
            for _ in 0..4 {
                let counters = counters.clone();
                tasks.push(tokio::spawn(async move {
                    for _ in 0..100 {
                        counters.increment("hot").await.unwrap();
                    }
                }));
            }
        }
        for task in tasks {
            task.await.unwrap();
        }
    });
    let new_conflicts =
        MultiPrimary::conflicts(&*group).into_iter().zip(before).map(|(after, before)| after - before).max();
    eprintln!("async client, default package: {new_conflicts:?} conflicts");
    assert!(new_conflicts > Some(0), "random slots conflict between members");
    assert_eq!(totals_on_every_node(&*group, "group_async", "hot"), [Some(1200); 3]);
}

/// The members' positions are their ranks by server UUID, whatever their
/// server ids: each increments only the slots of its rank.
fn every_member_increments_only_the_slots_of_its_rank_among_the_members(group: &mut Group) {
    group.set_server_ids([1, 8, 15]);
    install(&*group, "group_owned", &group_replication());
    let mut reader = causal_conn(group.member(1), "group_owned");
    for slots in [7, 2, 1] {
        reader.exec_drop("CALL counter_setup(?, 'd', ?, NULL)", (format!("owned{slots}"), slots)).unwrap();
    }
    multi_primary::each_node_has_applied(&*group, "group_owned");
    let mut uuids: Vec<String> = group
        .members()
        .iter()
        .map(|member| member.root_conn().query_first("SELECT @@GLOBAL.server_uuid").unwrap().unwrap())
        .collect();
    let by_member = uuids.clone();
    uuids.sort();
    for (member, uuid) in group.members().into_iter().zip(&by_member) {
        let position = uuids.iter().position(|known| known == uuid).unwrap() as u32 + 1;
        let mut conn = conn(member, "group_owned");
        for slots in [7, 2, 1] {
            let name = format!("owned{slots}");
            let read = |reader: &mut Conn| -> Vec<(u32, i64)> {
                reader
                    .exec(
                        "SELECT counter_id, counter FROM counters WHERE counter_name = ? ORDER BY counter_id",
                        (&name,),
                    )
                    .unwrap()
            };
            let before = read(&mut reader);
            for _ in 0..30 {
                conn.exec_drop("CALL counter_increment(?)", (&name,)).unwrap();
            }
            let after = read(&mut reader);
            assert_eq!(
                slots_hit(&before, &after),
                owned_slots(position, 3, slots),
                "member ranked {position}, {slots} slots"
            );
        }
    }
}

fn a_reset_erases_every_increment_acknowledged_on_another_member(group: &mut Group) {
    multi_primary::check_resets_erase_remote_increments(&*group, "group_reset", &group_replication());
}

/// A transaction on member 2 that holds a row a write committed on member
/// 1 then needs is rolled back by the group as member 2 applies that write:
/// its COMMIT fails with 1180 and the storage engine's error 149, which the
/// client runs again ([`package::is_commit_deadlock`]). The number stays in
/// a session that reads German messages, where the words do not.
fn a_transaction_a_remote_one_needs_fails_at_commit_alike_in_german_and_english(group: &mut Group) {
    let database = "group_commit";
    install(&*group, database, &group_replication());
    let mut member_1 = conn(group.member(1), database);
    member_1.query_drop("CREATE TABLE held (id INT PRIMARY KEY, n INT NOT NULL)").unwrap();
    member_1.query_drop("INSERT INTO held VALUES (1, 0)").unwrap();
    multi_primary::each_node_has_applied(&*group, database);
    let mut watcher = conn(group.member(2), database);
    for (round, german) in [false, true].into_iter().enumerate() {
        let mut member_2 = conn(group.member(2), database);
        if german {
            support::speak_german(&mut member_2);
        }
        member_2.query_drop("START TRANSACTION").unwrap();
        member_2.query_drop("UPDATE held SET n = n + 100 WHERE id = 1").unwrap();
        member_1.query_drop("UPDATE held SET n = n + 1 WHERE id = 1").unwrap();
        // Member 1's write applied on member 2 is what rolled the local
        // transaction back.
        let applied = round as i64 + 1;
        let deadline = Instant::now() + Duration::from_secs(30);
        while watcher.query_first::<i64, _>("SELECT n FROM held WHERE id = 1").unwrap() != Some(applied) {
            assert!(Instant::now() < deadline, "member 2 applied member 1's write");
            thread::sleep(Duration::from_millis(10));
        }
        let Err(mysql::Error::MySqlError(error)) = member_2.query_drop("COMMIT") else {
            panic!("the local transaction committed over the remote one");
        };
        assert_eq!(error.code, 1180, "{error}");
        let words = if german { "Fehler 149 " } else { "Got error 149 " };
        assert!(error.message.starts_with(words), "{error}");
        assert!(package::is_commit_deadlock(error.code, &error.message), "{error}");
    }
}

/// A member applies a re-install's DROP TRIGGER and CREATE TRIGGER as the
/// two transactions member 1 ran: a write on it between them is refused by
/// the package's check, sent again, and counted once.
fn re_installs_on_one_member_lose_nothing_the_others_write(group: &mut Group) {
    let gaps = multi_primary::check_re_installs_under_remote_writes_lose_nothing(
        &*group,
        "group_reinstall",
        &group_replication(),
    );
    eprintln!("writers in English met {:?}; in German {:?}", gaps.english, gaps.german);
}

fn resizes_on_one_member_under_load_from_the_others_stay_exact(group: &mut Group) {
    multi_primary::check_resizes_under_remote_load_stay_exact(&*group, "group_resize", &group_replication());
}

/// A shrink waits for the group with statements of its own and leaves the
/// session's `group_replication_consistency` as it was, whether the shrink
/// finished or one of its steps failed (here a step refused for folding
/// more than a slot may hold into the slot it moves into).
fn a_shrink_gives_the_session_its_own_consistency_back(group: &mut Group) {
    let package = group_replication();
    install(&*group, "group_consistency", &package);
    let mut admin = conn(group.member(1), "group_consistency");
    admin.query_drop("CALL counter_setup('shrunk', 'd', 9, 90)").unwrap();
    admin.query_drop("SET SESSION group_replication_consistency = 'EVENTUAL'").unwrap();
    let consistency = |conn: &mut Conn| -> String {
        conn.query_first("SELECT @@SESSION.group_replication_consistency").unwrap().unwrap()
    };

    admin.query_drop("CALL counter_resize('shrunk', 6)").unwrap();
    assert_eq!(consistency(&mut admin), "EVENTUAL", "after a shrink that finished");

    let bound = package.slot_bound();
    admin.exec_drop("UPDATE counters SET counter = ? WHERE counter_name = 'shrunk'", (bound,)).unwrap();
    let error = admin.query_drop("CALL counter_resize('shrunk', 2)").unwrap_err();
    assert!(error.to_string().contains("9003"), "{error}");
    assert_eq!(consistency(&mut admin), "EVENTUAL", "after a shrink step that failed");
    assert_eq!(
        totals_on_every_node(&*group, "group_consistency", "shrunk"),
        [Some(6 * bound); 3],
        "the refused step moved nothing"
    );
}

fn member_slots_follow_a_member_that_leaves_and_rejoins(group: &mut Group) {
    install(&*group, "group_membership", &group_replication());
    conn(group.member(1), "group_membership")
        .query_drop("CALL counter_setup('members', 'd', 12, NULL)")
        .unwrap();

    group.leave(3);
    let two_members = call_from_every_member(group, "group_membership", "members", 3, 100);
    assert_eq!(totals_on_every_node(&*group, "group_membership", "members"), [Some(600); 2]);

    group.rejoin(3);
    let three_members = call_from_every_member(group, "group_membership", "members", 3, 100);
    assert_eq!(totals_on_every_node(&*group, "group_membership", "members"), [Some(1500); 3]);
    assert_eq!((two_members, three_members), (0, 0), "certification conflicts with two members, then three");
}

/// `bench` spreads its clients over every `--url` and reports each round's
/// conflicts, as the group counts them: none for node slots, which on a
/// group are the members' own.
fn bench_over_every_member_reports_the_conflicts_member_slots_avoid(group: &mut Group) {
    group.set_server_ids([1, 8, 15]);
    group.member(1).root_conn().query_drop("CREATE DATABASE group_bench").unwrap();
    let urls: Vec<String> = group.members().iter().map(|member| member.url("group_bench")).collect();
    let report = multi_primary::bench_and_advise_over(&urls);
    assert_eq!(report["server"]["group_replication_members"], 3, "{report}");
    let conflicts = |variant: &str| -> u64 {
        let round =
            report["results"].as_array().unwrap().iter().find(|round| round["variant"] == variant).unwrap();
        assert_eq!(round["total_exact"], true, "{round}");
        round["group_replication_conflicts"].as_u64().unwrap()
    };
    assert_eq!(conflicts("node"), 0);
    assert!(conflicts("dynamic") > 0, "{report}");
}
