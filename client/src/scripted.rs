//! A driver that answers from a script, for unit tests of the client's own
//! logic without a server: the retries and their backoff, the reinstall
//! ride-through, resends under a write id, the plain mode's statements and
//! fallbacks, and the coalescing handles' flushes. Each statement a call
//! sends takes the next reply of the script, whichever thread or task sends
//! it; what was sent, and every pause the client asked for, stay for the
//! test to read. Its futures wait only for a slow reply (the async
//! client's), so [`ready`] runs them as it runs the sync client's.
//!
//! [`ready`]: crate::driver::ready

use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Once, PoisonError};
use std::time::Duration;

use slotted_counters_core::package::errno;
use slotted_counters_core::refusals;

use crate::driver::{Connection, Owner, Param, Statement};
use crate::engine::{Attempt, Driver, Outcome};
use crate::error::CounterError;

/// What the server answers to one statement.
#[derive(Debug, Clone)]
pub(crate) enum Reply {
    /// Success, with this many rows changed.
    Changed(u64),
    /// Success, with these rows, each column a nullable BIGINT.
    Rows(Vec<Vec<Option<i64>>>),
    /// Success, with one row of one text.
    Text(Option<String>),
    /// The server's error with this number.
    Error(u16),
    /// A bounded counter's refusal (9004) of a write past its floor of 0,
    /// with this much room left, as the routines word it.
    PastFloor(u64),
    /// The connection broke before an answer arrived.
    Lost,
    /// An answer the driver could not read as the type asked for.
    Undecodable,
    /// The reply, once the test opens the gate: the thread that sent the
    /// statement blocks until then (for the sync client).
    Held(Gate, Box<Reply>),
    /// The reply, after this long on tokio's clock (for the async client).
    #[cfg(feature = "sqlx")]
    Slow(Duration, Box<Reply>),
    /// A panic in the driver, as a bug in it would be.
    Panic,
    /// The reply to the statement of this text, and to no other: a script
    /// made of them reads as the steps of a call, and fails at the first
    /// step the client takes otherwise, naming both ([`answer`]).
    To(String, Box<Reply>),
}

/// `reply`, as the answer to the statement whose text is `sql` only.
pub(crate) fn answer(sql: &str, reply: Reply) -> Reply {
    Reply::To(sql.to_owned(), Box::new(reply))
}

/// Holds back the replies that wait for it until it is opened.
#[derive(Debug, Clone, Default)]
pub(crate) struct Gate(Arc<(Mutex<bool>, Condvar)>);

impl Gate {
    pub(crate) fn open(&self) {
        *self.0.0.lock().unwrap() = true;
        self.0.1.notify_all();
    }

    fn wait(&self) {
        let open = self.0.0.lock().unwrap();
        drop(self.0.1.wait_while(open, |open| !*open).unwrap());
    }
}

/// A statement as it was sent: its text and its parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sent {
    pub(crate) sql: String,
    pub(crate) params: Vec<Arg>,
}

/// A parameter as it was sent, kept for a test to compare.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Arg {
    Text(String),
    Number(Option<i64>),
    Flag(bool),
    Bytes(Vec<u8>),
}

impl Arg {
    pub(crate) fn text(text: &str) -> Self {
        Arg::Text(text.to_owned())
    }

    pub(crate) fn number(number: i64) -> Self {
        Arg::Number(Some(number))
    }

    /// The number sent, where a test reads one the client chose (a slot).
    pub(crate) fn as_number(&self) -> Option<i64> {
        match *self {
            Arg::Number(number) => number,
            _ => None,
        }
    }
}

impl From<&Param<'_>> for Arg {
    fn from(param: &Param<'_>) -> Self {
        match *param {
            Param::Text(text) => Arg::text(text),
            Param::Number(number) => Arg::Number(number),
            Param::Flag(flag) => Arg::Flag(flag),
            Param::Bytes(bytes) => Arg::Bytes(bytes.to_vec()),
        }
    }
}

/// The replies left, and what the client sent and paused for so far.
#[derive(Debug, Default)]
struct Script {
    replies: VecDeque<Reply>,
    sent: Vec<Sent>,
    pauses: Vec<Duration>,
}

/// A connection that answers each statement with the next reply of its
/// script, and keeps what it was sent. Its clones share the script.
#[derive(Debug, Clone, Default)]
pub(crate) struct ScriptedConnection {
    script: Arc<Mutex<Script>>,
}

impl ScriptedConnection {
    pub(crate) fn new(replies: impl IntoIterator<Item = Reply>) -> Self {
        let script = Script { replies: replies.into_iter().collect(), ..Script::default() };
        ScriptedConnection { script: Arc::new(Mutex::new(script)) }
    }

    /// The statements sent so far, in order.
    pub(crate) fn sent(&self) -> Vec<Sent> {
        self.lock().sent.clone()
    }

    fn lock(&self) -> MutexGuard<'_, Script> {
        // A test whose driver panicked on purpose goes on reading the script.
        self.script.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The reply to `statement`, once it is due.
    async fn reply(&mut self, statement: &Statement<'_>) -> Reply {
        let mut reply = {
            let mut script = self.lock();
            script.sent.push(Sent {
                sql: statement.sql.to_string(),
                params: statement.params.iter().map(Arg::from).collect(),
            });
            script
                .replies
                .pop_front()
                .unwrap_or_else(|| panic!("the script has no reply left for {}", statement.sql))
        };
        loop {
            reply = match reply {
                Reply::Held(gate, then) => {
                    gate.wait();
                    *then
                }
                #[cfg(feature = "sqlx")]
                Reply::Slow(time, then) => {
                    tokio::time::sleep(time).await;
                    *then
                }
                Reply::Panic => panic!("the scripted driver panicked"),
                Reply::To(expected, then) => {
                    assert_eq!(statement.sql, expected, "the script's step answers another statement");
                    *then
                }
                reply => return reply,
            }
        }
    }
}

fn failure(reply: Reply) -> CounterError {
    match reply {
        Reply::Error(code) => CounterError::from_server(
            code,
            "HY000".to_owned(),
            format!("scripted error {code}"),
            std::io::Error::other("scripted"),
        ),
        Reply::PastFloor(room) => CounterError::from_server(
            errno::PAST_BOUND,
            "23000".to_owned(),
            refusals::about(&refusals::past_limit(refusals::Limit::Floor, 0, room), "stock"),
            std::io::Error::other("scripted"),
        ),
        Reply::Lost => {
            CounterError::connection("the scripted connection broke", std::io::Error::other("lost"))
        }
        Reply::Undecodable => CounterError::unexpected_answer("a scripted value of another type", None),
        reply => panic!("a script's mistake: {reply:?} is no failure"),
    }
}

impl Connection for ScriptedConnection {
    async fn execute(&mut self, statement: &Statement<'_>) -> Result<u64, CounterError> {
        match self.reply(statement).await {
            Reply::Changed(rows) => Ok(rows),
            Reply::Rows(_) | Reply::Text(_) => {
                panic!("a script's mistake: rows for {}, whose rows are dropped", statement.sql)
            }
            failed => Err(failure(failed)),
        }
    }

    async fn rows(&mut self, statement: &Statement<'_>) -> Result<Vec<Vec<Option<i64>>>, CounterError> {
        match self.reply(statement).await {
            Reply::Rows(rows) => Ok(rows),
            Reply::Changed(_) | Reply::Text(_) => {
                panic!("a script's mistake: no rows of numbers for {}, which reads them", statement.sql)
            }
            failed => Err(failure(failed)),
        }
    }

    async fn text(&mut self, statement: &Statement<'_>) -> Result<Option<String>, CounterError> {
        match self.reply(statement).await {
            Reply::Text(text) => Ok(text),
            Reply::Changed(_) | Reply::Rows(_) => {
                panic!("a script's mistake: no text for {}, which reads one", statement.sql)
            }
            failed => Err(failure(failed)),
        }
    }

    async fn texts(&mut self, statement: &Statement<'_>) -> Result<Vec<Vec<Option<String>>>, CounterError> {
        panic!("no script answers rows of texts, which {} reads: the live tests read the room", statement.sql)
    }
}

/// A driver whose connection is scripted: every try of a call runs on it,
/// as the caller's connection or as one the client owns. Its clones share
/// the script, so a test keeps one to read what a client sent.
#[derive(Debug, Clone, Default)]
pub(crate) struct ScriptedDriver {
    conn: ScriptedConnection,
    owner: Owner,
}

impl ScriptedDriver {
    /// A connection of the client's own answering with `replies`.
    pub(crate) fn new(replies: impl IntoIterator<Item = Reply>) -> Self {
        ScriptedDriver { conn: ScriptedConnection::new(replies), owner: Owner::Client }
    }

    /// The caller's connection answering with `replies`.
    pub(crate) fn callers(replies: impl IntoIterator<Item = Reply>) -> Self {
        ScriptedDriver { owner: Owner::Caller, ..Self::new(replies) }
    }

    /// The statements sent so far, in order.
    pub(crate) fn sent(&self) -> Vec<Sent> {
        self.conn.sent()
    }

    /// The texts of the statements sent so far.
    pub(crate) fn sql(&self) -> Vec<String> {
        self.sent().into_iter().map(|sent| sent.sql).collect()
    }

    /// The pauses the client took between tries.
    pub(crate) fn pauses(&self) -> Vec<Duration> {
        self.conn.lock().pauses.clone()
    }

    /// Whether every reply of the script was taken.
    pub(crate) fn script_done(&self) -> bool {
        self.conn.lock().replies.is_empty()
    }
}

impl crate::engine::sealed::Sealed for ScriptedDriver {}

impl Driver for ScriptedDriver {
    async fn attempt(&self, attempt: Attempt<'_>) -> Result<Outcome, CounterError> {
        attempt.run(&mut self.conn.clone(), self.owner).await
    }

    async fn pause(&self, time: Duration) {
        self.conn.lock().pauses.push(time);
    }
}

impl crate::connections::SyncConnections for ScriptedDriver {}

#[cfg(feature = "sqlx")]
impl crate::connections::AsyncConnections for ScriptedDriver {}

/// The process's logger in the client's unit tests: each event goes to
/// the thread that emitted it, kept while that thread runs
/// [`seen_while`], as its level and its key-values.
struct Events;

thread_local! {
    /// The events this thread emitted since [`seen_while`] started.
    static SEEN: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
}

struct Fields(String);

impl<'kvs> log::kv::VisitSource<'kvs> for Fields {
    fn visit_pair(
        &mut self,
        key: log::kv::Key<'kvs>,
        value: log::kv::Value<'kvs>,
    ) -> Result<(), log::kv::Error> {
        self.0.push_str(&format!(" {key}={value:?}"));
        Ok(())
    }
}

impl log::Log for Events {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }

    fn log(&self, record: &log::Record<'_>) {
        SEEN.with_borrow_mut(|seen| {
            if let Some(seen) = seen {
                let mut fields = Fields(format!("{} {}", record.level(), record.args()));
                record.key_values().visit(&mut fields).expect("a test's logger reads every key-value");
                seen.push(fields.0);
            }
        });
    }

    fn flush(&self) {}
}

/// The events `run` emitted on this thread, each as its level and its
/// fields.
pub(crate) fn seen_while(run: impl FnOnce()) -> Vec<String> {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        log::set_logger(&Events).expect("the client's tests set no other logger");
        log::set_max_level(log::LevelFilter::Trace);
    });
    SEEN.set(Some(Vec::new()));
    run();
    SEEN.take().unwrap_or_default()
}
