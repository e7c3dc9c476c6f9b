//! A sharded MariaDB booted by the tests: a Spider head and two data
//! servers (MariaDB 10.11 with Debian's `mariadb-plugin-spider`), each a
//! [`Booted`] server torn down with the test binary. A database made here
//! holds the plain table on both data servers, and on the head a Spider
//! table of the same columns partitioned by `KEY (counter_name)` over them
//! so that every slot of a counter lives on one data server.

use mysql::prelude::Queryable;
use mysql::{Conn, Pool};
use slotted_counters::PackageOptions;
use slotted_counters_cli::{render, script};

use super::Release;
use super::server::{Booted, Launch, TEST_PASSWORD, TEST_USER};

/// The head's partitions, spread over the data servers in turn. Odd: on
/// MariaDB 10.11, `KEY` partitioning hashes every `utf8mb4_unicode_ci`
/// value to an odd number (measured here: 10 names of 10 in the second of 2
/// partitions, none in the even ones of 4; `LINEAR KEY` and `ALGORITHM=1`
/// alike), so an even count leaves half the partitions empty.
const PARTITIONS: usize = 3;

pub struct Spider {
    pub head: Booted,
    pub data: [Booted; 2],
}

impl Spider {
    pub fn boot() -> Spider {
        let start = |config: &str| {
            Booted::launch(&Launch { config, durable: false, ..Launch::new(Release::MariaDb) })
                .unwrap_or_else(|error| panic!("cannot boot Spider: {error}"))
        };
        let data = [start(""), start("")];
        let head = start("plugin-load-add=ha_spider.so");
        Spider { head, data }
    }

    /// Creates `database`: the plain table of a package made with `options`
    /// on each data server, and the Spider table over them on the head.
    pub fn create_database(&self, database: &str, options: &PackageOptions) {
        let table = render::plain_tables_sql(options).unwrap().expect("a package the plain mode serves");
        for server in &self.data {
            let mut conn = server.root_conn();
            conn.query_drop(format!("CREATE DATABASE `{database}`")).unwrap();
            conn.query_drop(format!("USE `{database}`")).unwrap();
            script::run(&mut conn, &table).unwrap();
        }
        let partitions: Vec<String> = (0..PARTITIONS)
            .map(|partition| {
                let server = &self.data[partition % self.data.len()];
                format!("PARTITION p{partition} COMMENT = 'host \"127.0.0.1\", port \"{}\"'", server.port)
            })
            .collect();
        let mut head = self.head.root_conn();
        head.query_drop(format!("CREATE DATABASE `{database}`")).unwrap();
        head.query_drop(format!("USE `{database}`")).unwrap();
        // Each of plain_tables.sql's tables (the counters, their write
        // ids, periods and buckets, all keyed by the name first) as a
        // Spider table over the data servers' tables of the same name.
        let statements = script::split(&table).unwrap();
        assert_eq!(
            statements.len(),
            4,
            "plain_tables.sql makes the counters, write ids, periods and buckets"
        );
        for statement in statements {
            let name = statement
                .text
                .strip_prefix("CREATE TABLE IF NOT EXISTS `")
                .and_then(|rest| rest.split_once('`'))
                .map(|(name, _)| name.to_owned())
                .expect("a CREATE TABLE");
            let engine = format!(
                "ENGINE=SPIDER COMMENT = 'wrapper \"mysql\", table \"{name}\", database \"{database}\", \
                 user \"{TEST_USER}\", password \"{TEST_PASSWORD}\"'"
            );
            let spider = statement.text.replace("ENGINE=InnoDB", &engine);
            assert_ne!(spider, statement.text, "plain_tables.sql names each table's engine");
            head.query_drop(format!(
                "{spider} PARTITION BY KEY (`counter_name`) ({})",
                partitions.join(", ")
            ))
            .unwrap();
        }
    }

    /// A pool on the head for an account that may read and write
    /// `database` and run nothing: no EXECUTE.
    pub fn plain_pool(&self, database: &str) -> Pool {
        let user = format!("plain_{database}");
        let mut head = self.head.root_conn();
        head.query_drop(format!("CREATE USER '{user}'@'127.0.0.1' IDENTIFIED BY 'plain-password'")).unwrap();
        head.query_drop(format!(
            "GRANT SELECT, INSERT, UPDATE, DELETE ON `{database}`.* TO '{user}'@'127.0.0.1'"
        ))
        .unwrap();
        Pool::new(format!("mysql://{user}:plain-password@127.0.0.1:{}/{database}", self.head.port).as_str())
            .unwrap()
    }

    /// A root connection to data server `index` in `database`.
    pub fn data_conn(&self, index: usize, database: &str) -> Conn {
        let mut conn = self.data[index].root_conn();
        conn.query_drop(format!("USE `{database}`")).unwrap();
        conn
    }

    /// The deadlocks the data servers have counted.
    pub fn deadlocks(&self) -> u64 {
        self.data
            .iter()
            .map(|server| {
                slotted_counters_cli::database::deadlocks(&mut server.root_conn())
                    .unwrap()
                    .unwrap_or_default()
            })
            .sum()
    }
}
