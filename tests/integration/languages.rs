//! Applications in other languages, through their ecosystems' standard
//! drivers: PyMySQL (Python), MariaDB Connector/J (Java, its batches
//! written by Jackson) and mysql2 (Node). Each calls the routines, sends batches as its
//! default JSON encoder writes them (Python's escapes every non-ASCII
//! character, a surrogate pair for an emoji), and reads the package's
//! refusals as docs/other-languages.md says it does.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;

use mysql::prelude::Queryable;
use slotted_counters::{Bound, CounterError, Counters, ErrorKind, NewCounter, Period};
use slotted_counters_cli::render;
use slotted_counters_core::PackageOptions;
use slotted_counters_core::{names, periods};

use crate::support::fault_proxy::FaultProxy;
use crate::support::{self, Database, StopOnDrop, in_project, on_each_server};

mod java;
mod node;

on_each_server!(
    the_python_guide_runs_as_written,
    python_calls_the_package_through_pymysql,
    the_write_id_recipe_counts_once_from_python_through_cuts_and_kills,
    the_documented_name_rule_agrees_with_the_routines,
    each_refusal_reads_by_the_documented_grammar_from_python_and_rust,
);

/// The lines a program printed, after checking that it ran to its end.
fn printed(output: Output, program: &str) -> Vec<String> {
    assert!(
        output.status.success(),
        "{program} failed: {}\n{}\nrun `scripts/test`, which installs what the tests need",
        support::stdout(&output),
        support::stderr(&output),
    );
    support::stdout(&output).lines().map(str::to_owned).collect()
}

/// Runs `script` with `python3` (or `$PYTHON`), the database's address in
/// its environment: HOST, PORT, USER, PASSWORD, DATABASE.
fn python(script: &str, address: &Address) -> Output {
    Command::new(std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned()))
        .args(["-c", script])
        .env("HOST", &address.host)
        .env("PORT", address.port.to_string())
        .env("USER", &address.user)
        .env("PASSWORD", &address.password)
        .env("DATABASE", &address.database)
        .stdin(Stdio::null())
        .output()
        .expect("run python3")
}

/// The test database's address, for a driver of another language.
struct Address {
    host: String,
    port: u16,
    user: String,
    password: String,
    database: String,
}

impl Address {
    fn of(db: &Database) -> Self {
        let url = mysql::Opts::from_url(&db.url()).expect("the test URL parses");
        Address {
            host: url.get_ip_or_hostname().to_string(),
            port: url.get_tcp_port(),
            user: url.get_user().unwrap_or_default().to_owned(),
            password: url.get_pass().unwrap_or_default().to_owned(),
            database: db.name().to_owned(),
        }
    }
}

/// The Python block of docs/other-languages.md, the page's own text, with
/// the test database's connection arguments: what it reads is what its
/// calls wrote, and they stay counted once its connection is gone.
fn the_python_guide_runs_as_written() {
    let db = support::with_committed("generated");
    for name in ["downloads", "名前"] {
        db.conn().exec_drop("CALL counter_setup(?, 'from the guide', 4, NULL)", (name,)).unwrap();
    }
    let script = format!(
        r#"
import os
CONNECTION = dict(host=os.environ["HOST"], port=int(os.environ["PORT"]), user=os.environ["USER"],
                  password=os.environ["PASSWORD"], database=os.environ["DATABASE"])
{guide}
print(downloads, name)
print(today, len(per_day), sum(value for _, value in per_day), per_day[-1][0].hour)
"#,
        guide = python_block_after(&in_project("docs/other-languages.md"), "## Python"),
    );
    assert_eq!(
        printed(python(&script, &Address::of(&db)), "the Python guide"),
        ["43 2", "1 30 8 0"],
        "today's increment, 30 days of buckets starting at midnight UTC holding it and yesterday's 7"
    );
    // Counted once the script's connection is gone: committed, not left open.
    assert_eq!(support::total(&mut db.conn(), "downloads"), Some(51));
    assert_eq!(support::total(&mut db.conn(), "名前"), Some(2));
}

/// PyMySQL: `callproc` and `CALL` through `execute`, a batch written by
/// `json.dumps` with its defaults, and the error numbers of every refusal,
/// a fractional delta's included. PyMySQL classifies an error by its
/// number alone (the SQLSTATE plays no part): any number it does not know
/// above 999 is an `OperationalError`, and it decodes numbers as signed
/// 16-bit, so the package's stay under 32768.
fn python_calls_the_package_through_pymysql() {
    let db = support::with_committed("generated");
    let address = Address::of(&db);
    let script = r#"
import json, os, pymysql
conn = pymysql.connect(host=os.environ["HOST"], port=int(os.environ["PORT"]), user=os.environ["USER"],
                       password=os.environ["PASSWORD"], database=os.environ["DATABASE"], autocommit=True)
cursor = conn.cursor()
names = ["downloads", "名前 😀", "a&b<c>/d\"q\\"]
for name in names:
    cursor.callproc("counter_setup", (name, "from Python", 4, None))
cursor.execute("CALL counter_add(%s, %s)", ("downloads", 41))
batch = json.dumps({"downloads": 1, "名前 😀": 2, "a&b<c>/d\"q\\": 3})
print("batch:", batch)
cursor.execute("CALL counter_add_many(%s)", (batch,))
for name in names:
    cursor.execute("SELECT counter_get(%s)", (name,))
    print(name + ":", cursor.fetchone()[0])
for what, sql, args in [
    ("unknown counter", "CALL counter_increment(%s)", ("missing",)),
    ("already exists", "CALL counter_setup(%s, %s, %s, %s)", ("downloads", "again", None, None)),
    ("empty name", "CALL counter_setup(%s, %s, %s, %s)", ("", "d", None, None)),
    ("fractional delta", "CALL counter_add(%s, %s)", ("downloads", 1.5)),
    ("fractional batch", "CALL counter_add_many(%s)", (json.dumps({"downloads": 1.5}),)),
    ("missing routine", "CALL counter_missing(%s)", ("downloads",)),
    ("past the floor", "CALL counter_add(%s, %s)", ("bounded", -6)),
]:
    if what == "past the floor":
        cursor.callproc("counter_setup", ("bounded", "from Python", 4, 5))
        cursor.callproc("counter_bound", ("bounded", 0, None))
    try:
        cursor.execute(sql, args)
        print(what + ": no error")
    except pymysql.MySQLError as error:
        print(what + ":", error.args[0], type(error).__name__)
        if error.args[0] == 9004:
            print("room left:", error.args[1].split("(room left: ")[1].split(")")[0])
"#;
    let output = python(script, &address);
    assert_eq!(
        printed(output, "python3 with PyMySQL"),
        [
            r#"batch: {"downloads": 1, "\u540d\u524d \ud83d\ude00": 2, "a&b<c>/d\"q\\": 3}"#,
            "downloads: 42",
            "名前 😀: 2",
            "a&b<c>/d\"q\\: 3",
            "unknown counter: 9001 OperationalError",
            "already exists: 9002 OperationalError",
            "empty name: 9003 OperationalError",
            "fractional delta: 9003 OperationalError",
            "fractional batch: 9003 OperationalError",
            "missing routine: 1305 OperationalError",
            "past the floor: 9004 OperationalError",
            "room left: 5",
        ]
    );
    assert_eq!(support::total(&mut db.conn(), "downloads"), Some(42), "the refusals changed nothing");
}

/// The write-id recipe of docs/exactly-once.md, the page's own text, from
/// PyMySQL through a proxy that cuts about one write in 50, while another
/// session holds the counter's only slot now and then and `KILL QUERY`
/// interrupts the calls that wait for it. Every increment is acknowledged,
/// and counted once.
fn the_write_id_recipe_counts_once_from_python_through_cuts_and_kills() {
    let db = support::with_committed("generated");
    db.conn().query_drop("CALL counter_setup('recipe', 'from Python', 1, NULL)").unwrap();
    let proxy = FaultProxy::start(db.address(), 1.0 / 50.0);
    let address = Address { port: proxy.port, host: "127.0.0.1".to_owned(), ..Address::of(&db) };
    let script = format!(
        r#"
import os
CONNECTION = dict(host=os.environ["HOST"], port=int(os.environ["PORT"]), user=os.environ["USER"],
                  password=os.environ["PASSWORD"], database=os.environ["DATABASE"])
{recipe}
conn = connect(time.monotonic() + 60)
acknowledged = 0
for _ in range(600):
    conn = add_once(conn, "recipe", 1)
    acknowledged += 1
print("acknowledged:", acknowledged)
"#,
        recipe = python_block_after(&in_project("docs/exactly-once.md"), "## From any language: the recipe"),
    );
    let running = AtomicBool::new(true);
    let kills = thread::scope(|scope| {
        let _stop = StopOnDrop(&running);
        let holder = scope.spawn(|| support::hold_now_and_then(&db, "recipe", &running));
        let killer = scope.spawn(|| kill_lock_waits(&db, &running));
        let output = python(&script, &address);
        running.store(false, Ordering::SeqCst);
        holder.join().unwrap();
        assert_eq!(printed(output, "python3 with PyMySQL"), ["acknowledged: 600"]);
        killer.join().unwrap()
    });
    proxy.stop_cutting();
    assert!(proxy.cuts.answers_lost.load(Ordering::Relaxed) > 0, "{}", proxy.summary());
    assert!(kills > 0, "no call was killed");
    assert_eq!(support::total(&mut db.conn(), "recipe"), Some(600), "{}", proxy.summary());
    println!(
        "Python recipe on {:?}: {}, {kills} calls killed; 600 acknowledged, 600 counted",
        support::release(),
        proxy.summary()
    );
}

/// The grammar of a refusal's message in docs/reference.md, the page's own
/// Python, reads the servers' messages of each refusal as the Rust client
/// reads them into its error's fields: the counter's name (quotes,
/// backslashes and all; none once the message cut it, and an emoji as `?`,
/// where the Rust client takes the call's), a bound and its room, a
/// period's limit, its room and its reset.
fn each_refusal_reads_by_the_documented_grammar_from_python_and_rust() {
    let db = support::with_committed("generated");
    let odd = r"it's: 'x' \ y";
    // Known to the routines' name rule, cut from their message.
    let long = "n".repeat(120);
    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('stock', 'd', 4, 5)").unwrap();
    conn.query_drop("CALL counter_bound('stock', 0, NULL)").unwrap();
    conn.query_drop("CALL counter_setup('api', 'd', 1, NULL)").unwrap();
    conn.query_drop("CALL counter_limit('api', 'day', 1)").unwrap();
    conn.query_drop("CALL counter_increment('api')").unwrap();
    let mut next_midnight = || -> String {
        conn.query_first("SELECT CAST(UTC_DATE() + INTERVAL 1 DAY AS DATETIME)").unwrap().unwrap()
    };
    let resets_before = next_midnight();
    let script = format!(
        r#"
import json, os, pymysql
{grammar}
conn = pymysql.connect(host=os.environ["HOST"], port=int(os.environ["PORT"]), user=os.environ["USER"],
                       password=os.environ["PASSWORD"], database=os.environ["DATABASE"], autocommit=True)
cursor = conn.cursor()
for sql, args in [
    ("CALL counter_increment(%s)", ({odd:?},)),
    ("CALL counter_setup(%s, 'd', NULL, NULL)", ("stock",)),
    ("CALL counter_setup(%s, 'd', 0, NULL)", ("zero",)),
    ("CALL counter_add(%s, %s)", ("stock", -6)),
    ("CALL counter_increment(%s)", ("api",)),
    ("CALL counter_increment(%s)", ({long:?},)),
    ("CALL counter_increment(%s)", ("名前 😀",)),
]:
    try:
        cursor.execute(sql, args)
        print("no error")
    except pymysql.MySQLError as error:
        print(error.args[0], json.dumps(read_refusal(error.args[1]), sort_keys=True, ensure_ascii=False))
"#,
        grammar = python_block_after(&in_project("docs/reference.md"), "### Reading a refusal's message"),
    );
    let lines = printed(python(&script, &Address::of(&db)), "the documented grammar of refusals");
    let resets = lines[4].split("\"resets\": \"").nth(1).and_then(|rest| rest.get(..19)).unwrap_or_default();
    assert!([resets_before.as_str(), next_midnight().as_str()].contains(&resets), "{lines:?}");
    assert_eq!(
        lines,
        [
            r#"9001 {"name": "it's: 'x' \\ y"}"#.to_owned(),
            r#"9002 {"name": "stock"}"#.to_owned(),
            r#"9003 {"name": "zero"}"#.to_owned(),
            r#"9004 {"bound": "floor", "limit": 0, "name": "stock", "room": 5}"#.to_owned(),
            format!(
                r#"9004 {{"limit": 1, "name": "api", "period": "day", "resets": "{resets}", "room": 0}}"#
            ),
            r#"9001 {"name": null}"#.to_owned(),
            // The servers send messages in utf8mb3: the emoji arrives as `?`.
            r#"9001 {"name": "名前 ?"}"#.to_owned(),
        ],
    );

    let counters = Counters::new(db.pool().clone()).unwrap();
    let unknown = counters.increment(odd).unwrap_err();
    assert_eq!((unknown.kind(), unknown.counter()), (ErrorKind::NotFound, Some(odd)));
    let exists = counters.setup("stock", NewCounter::new("d")).unwrap_err();
    assert_eq!((exists.kind(), exists.counter()), (ErrorKind::AlreadyExists, Some("stock")));
    let zero = counters.setup("zero", NewCounter::new("d").slots(0)).unwrap_err();
    assert_eq!((zero.kind(), zero.counter()), (ErrorKind::InvalidArgument, Some("zero")));
    let past_floor = counters.add("stock", -6).unwrap_err();
    assert!(
        matches!(&past_floor, CounterError::PastBound { name: Some(name), bound: Bound::Floor, room: 5, .. } if name == "stock"),
        "{past_floor:?}"
    );
    let past_limit = counters.increment("api").unwrap_err();
    let CounterError::PastLimit {
        name: Some(name), period: Period::Day, limit: 1, room: 0, resets: at, ..
    } = &past_limit
    else {
        panic!("a day's limit: {past_limit:?}");
    };
    let at = at.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    assert_eq!(
        (name.as_str(), Some(at)),
        ("api", periods::utc_seconds(resets).map(|seconds| seconds as u64))
    );
    let cut = counters.increment(&long).unwrap_err();
    assert_eq!((cut.kind(), cut.counter()), (ErrorKind::NotFound, Some(long.as_str())), "from the call");
    let emoji = counters.increment("名前 😀").unwrap_err();
    assert_eq!(emoji.counter(), Some("名前 😀"), "the call's name, not the message's");
}

/// The first Python code block after `heading` in the Markdown file at `path`.
fn python_block_after(path: &Path, heading: &str) -> String {
    let page = std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    let section =
        &page[page.find(heading).unwrap_or_else(|| panic!("no {heading:?} in {}", path.display()))..];
    let start = section.find("```python\n").expect("a Python block") + "```python\n".len();
    let length = section[start..].find("```").expect("the block's end");
    section[start..start + length].to_owned()
}

/// Until `running` is cleared, sends `KILL QUERY` to the calls on the
/// test's database that wait for a lock; returns how many it sent.
fn kill_lock_waits(db: &Database, running: &AtomicBool) -> u32 {
    let mut killer = db.conn();
    let mut kills = 0;
    while running.load(Ordering::SeqCst) {
        let waiting: Option<String> = support::read_innodb_trx(
            &mut killer,
            "SELECT GROUP_CONCAT(trx.trx_mysql_thread_id) FROM information_schema.innodb_trx AS trx \
             JOIN information_schema.PROCESSLIST AS process ON process.ID = trx.trx_mysql_thread_id \
             WHERE trx.trx_state = 'LOCK WAIT' AND process.DB = DATABASE()",
        )
        .flatten();
        for victim in waiting.iter().flat_map(|ids| ids.split(',')) {
            // The call may have ended since: the kill is then refused (the
            // connection is gone) or meets the connection between calls.
            if killer.query_drop(format!("KILL QUERY {victim}")).is_ok() {
                kills += 1;
            }
        }
    }
    kills
}

/// The name rule of docs/plain-sql.md, the page's own Python, reading the
/// header of `plain_statements.sql` as an application in another language
/// would, gives the routines' answer for every code point the header lists
/// (inside a name and at its end), every control character, and names the
/// routines accept: an increment of a name the rule accepts is refused
/// only as an unknown counter. For the default package, whose rule is
/// short, and for one in `utf8mb4_unicode_ci`, whose header lists the 470
/// code points it ignores.
fn the_documented_name_rule_agrees_with_the_routines() {
    let unicode_ci = PackageOptions::builder().collation("utf8mb4_unicode_ci").build().unwrap();
    for options in [PackageOptions::default(), unicode_ci] {
        let collation = options.collation().to_owned();
        let db = support::with_package(&options);
        let reference = tempfile::NamedTempFile::new().unwrap();
        let rendered = render::render(&options).unwrap();
        let statements =
            rendered.iter().find(|file| file.name == "plain_statements.sql").expect("a plain form");
        std::fs::write(reference.path(), &statements.contents).unwrap();
        let script = format!(
            r#"
import os, pymysql
{rule}
reference = open(r"{reference}", encoding="utf-8").read()
listed = set()
for first, last in re.findall(r"U\+([0-9A-F]+)(?:-U\+([0-9A-F]+))?", reference):
    listed |= set(range(int(first, 16), int(last or first, 16) + 1))
inside = sorted(listed | set(range(0, 32)) | set(range(127, 160)))
names = [f"a{{chr(code)}}b" for code in inside] + [f"ab{{chr(code)}}" for code in sorted(listed)]
names += ["downloads", "名前", "x😀", "é", "Ab", "a\u00a0b", "a b", "a ", "x" * 50, "x" * 51, "ŝ" * 51]
conn = pymysql.connect(host=os.environ["HOST"], port=int(os.environ["PORT"]), user=os.environ["USER"],
                       password=os.environ["PASSWORD"], database=os.environ["DATABASE"], autocommit=True)
cursor = conn.cursor()
disagreements = []
for name in names:
    expected = name_problem(name, reference)
    try:
        cursor.execute("CALL counter_increment(%s)", (name,))
        answer = (0, "")
    except pymysql.err.MySQLError as error:
        answer = error.args
    if expected is None:
        agrees = answer[0] == 9001
    else:
        agrees = answer[0] == 9003 and answer[1].startswith(expected + ": ")
    if not agrees:
        disagreements.append((ascii(name), expected, answer))
print(len(names))
print("disagreements:", disagreements[:10])
"#,
            rule =
                dedented(&python_block_after(&in_project("docs/plain-sql.md"), "### From another language")),
            reference = reference.path().display(),
        );
        let lines = printed(python(&script, &Address::of(&db)), "the documented name rule");
        assert_eq!(lines.last().map(String::as_str), Some("disagreements: []"), "{collation}: {lines:?}");
        // Every code point the header lists (the control characters'
        // ranges among them) was tried, inside a name and at its end.
        let mut listed: BTreeSet<u32> = (0..32).chain(127..160).collect();
        for ranges in [names::ignored_by(&collation), names::spaces_in(&collation)] {
            let ranges = ranges.expect("the client knows both collations");
            listed.extend(ranges.iter().flat_map(|&(first, last)| first..=last));
        }
        assert_eq!(lines[0], (2 * listed.len() + 11).to_string(), "{collation}: names tried");
    }
}

/// `block` with the indentation its lines share taken off: a code block
/// inside a list item.
fn dedented(block: &str) -> String {
    let indent = block
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| line.len() - line.trim_start().len())
        .min()
        .unwrap_or(0);
    block.lines().map(|line| line.get(indent..).unwrap_or_default()).collect::<Vec<_>>().join("\n")
}
