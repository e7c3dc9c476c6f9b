//! A driver that answers from a script, for unit tests of the client's own
//! logic without a server: the retries and their backoff, the reinstall
//! ride-through, resends under a write id, the plain mode's statements and
//! fallbacks. Each statement a call sends takes the next reply of the
//! script; what was sent, and every pause the client asked for, stay for
//! the test to read. Its futures never wait, so [`ready`] runs them, as it
//! runs the sync client's.
//!
//! [`ready`]: crate::driver::ready

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::call::{Answer, Call};
use crate::driver::{Connection, Owner, Statement};
use crate::engine::Driver;
use crate::error::CounterError;
use crate::mode::Mode;

/// What the server answers to one statement.
#[derive(Debug, Clone)]
pub(crate) enum Reply {
    /// Success, with this many rows changed.
    Changed(u64),
    /// Success, with these rows, each column a nullable BIGINT.
    Rows(Vec<Vec<Option<i64>>>),
    /// The server's error with this number.
    Error(u16),
    /// The connection broke before an answer arrived.
    Lost,
}

/// A statement as it was sent: its text, and its parameters as `Debug`
/// writes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sent {
    pub(crate) sql: String,
    pub(crate) params: Vec<String>,
}

/// A connection that answers each statement with the next reply of its
/// script, and keeps what it was sent.
#[derive(Debug, Default)]
pub(crate) struct ScriptedConnection {
    replies: VecDeque<Reply>,
    sent: Vec<Sent>,
}

impl ScriptedConnection {
    pub(crate) fn new(replies: impl IntoIterator<Item = Reply>) -> Self {
        ScriptedConnection { replies: replies.into_iter().collect(), sent: Vec::new() }
    }

    /// The statements sent so far, in order.
    pub(crate) fn sent(&self) -> &[Sent] {
        &self.sent
    }

    fn reply(&mut self, statement: &Statement<'_>) -> Reply {
        self.sent.push(Sent {
            sql: statement.sql.to_string(),
            params: statement.params.iter().map(|param| format!("{param:?}")).collect(),
        });
        self.replies
            .pop_front()
            .unwrap_or_else(|| panic!("the script has no reply left for {}", statement.sql))
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
        Reply::Lost => {
            CounterError::connection("the scripted connection broke", std::io::Error::other("lost"))
        }
        reply => panic!("a script's mistake: {reply:?} is no failure"),
    }
}

impl Connection for ScriptedConnection {
    async fn execute(&mut self, statement: &Statement<'_>) -> Result<u64, CounterError> {
        match self.reply(statement) {
            Reply::Changed(rows) => Ok(rows),
            Reply::Rows(_) => {
                panic!("a script's mistake: rows for {}, whose rows are dropped", statement.sql)
            }
            failed => Err(failure(failed)),
        }
    }

    async fn rows(&mut self, statement: &Statement<'_>) -> Result<Vec<Vec<Option<i64>>>, CounterError> {
        match self.reply(statement) {
            Reply::Rows(rows) => Ok(rows),
            Reply::Changed(_) => {
                panic!("a script's mistake: a count of rows for {}, which reads rows", statement.sql)
            }
            failed => Err(failure(failed)),
        }
    }
}

/// A driver whose one connection is scripted: every try of a call runs on
/// it, as the caller's connection or as one the client owns.
#[derive(Default)]
pub(crate) struct ScriptedDriver {
    conn: Cell<ScriptedConnection>,
    owner: Owner,
    pauses: RefCell<Vec<Duration>>,
}

impl ScriptedDriver {
    /// A connection of the client's own answering with `replies`.
    pub(crate) fn new(replies: impl IntoIterator<Item = Reply>) -> Self {
        ScriptedDriver { conn: Cell::new(ScriptedConnection::new(replies)), ..Self::default() }
    }

    /// The caller's connection answering with `replies`.
    pub(crate) fn callers(replies: impl IntoIterator<Item = Reply>) -> Self {
        ScriptedDriver { owner: Owner::Caller, ..Self::new(replies) }
    }

    /// The statements sent so far, in order.
    pub(crate) fn sent(&self) -> Vec<Sent> {
        let conn = self.conn.take();
        let sent = conn.sent().to_vec();
        self.conn.set(conn);
        sent
    }

    /// The texts of the statements sent so far.
    pub(crate) fn sql(&self) -> Vec<String> {
        self.sent().into_iter().map(|sent| sent.sql).collect()
    }

    /// The pauses the client took between tries.
    pub(crate) fn pauses(&self) -> Vec<Duration> {
        self.pauses.borrow().clone()
    }

    /// Whether every reply of the script was taken.
    pub(crate) fn script_done(&self) -> bool {
        let conn = self.conn.take();
        let done = conn.replies.is_empty();
        self.conn.set(conn);
        done
    }
}

impl Driver for ScriptedDriver {
    async fn attempt(&self, mode: &Mode, call: Call<'_>) -> Result<Answer, CounterError> {
        let mut conn = self.conn.take();
        let outcome = mode.run(&mut conn, call, self.owner).await;
        self.conn.set(conn);
        outcome
    }

    async fn pause(&self, time: Duration) {
        self.pauses.borrow_mut().push(time);
    }
}

/// A tracing subscriber that keeps the events it receives, each as its
/// level and its fields.
#[derive(Default, Clone)]
struct Events(Arc<Mutex<Vec<String>>>);

impl Events {
    fn seen(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

struct Fields(String);

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!(" {}={value:?}", field.name()));
    }
}

impl tracing::Subscriber for Events {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }

    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}

    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}

    fn event(&self, event: &tracing::Event<'_>) {
        let mut fields = Fields(event.metadata().level().to_string());
        event.record(&mut fields);
        self.0.lock().unwrap().push(fields.0);
    }

    fn enter(&self, _: &tracing::span::Id) {}

    fn exit(&self, _: &tracing::span::Id) {}
}

pub(crate) fn seen_while(run: impl FnOnce()) -> Vec<String> {
    let events = Events::default();
    tracing::subscriber::with_default(events.clone(), run);
    events.seen()
}
