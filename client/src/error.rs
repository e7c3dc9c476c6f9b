//! The error of a counter call, the same whichever driver ran it. Messages
//! name the counter or server at fault and, where there is one, the way out.

use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use slotted_counters_core::package::{self, REFUSAL_SQLSTATE, errno, server_errno};
use slotted_counters_core::periods::{self, Period};
use slotted_counters_core::refusals::{self, Limit};

/// The error a driver reported, kept as the source of a [`CounterError`]:
/// shared, so that a coalesced flush hands every caller it carried the same
/// error.
type DriverError = Arc<dyn StdError + Send + Sync>;

/// An error of a counter call, made by [`crate::Counters`] or, with the
/// feature `sqlx`, `AsyncCounters`: it reads the same whichever driver ran
/// the call.
///
/// The variant says what happened: the package's refusals
/// ([`NotFound`](CounterError::NotFound),
/// [`AlreadyExists`](CounterError::AlreadyExists),
/// [`InvalidArgument`](CounterError::InvalidArgument),
/// [`PastBound`](CounterError::PastBound),
/// [`PastLimit`](CounterError::PastLimit)), each with the counter's name
/// where it has one, a package that is not there, a busy or read-only
/// server, any other server error, a connection that failed or could not
/// be opened, an answer the call cannot read, a pool with no connection to
/// give. [`CounterError::kind`] names it in one word for a `match`, a log
/// or a metric; [`CounterError::is_retryable`] and
/// [`CounterError::may_have_applied`] say what a caller may do next;
/// [`CounterError::code`] and [`CounterError::sqlstate`] give the numbers a
/// server sent or the package would have sent.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum CounterError {
    /// The counter does not exist (package errno 9001).
    #[error("{message}")]
    NotFound {
        message: String,
        /// The counter's name ([`CounterError::counter`]).
        name: Option<String>,
    },

    /// `setup` of a counter that exists (package errno 9002).
    #[error("{message}")]
    AlreadyExists {
        message: String,
        /// The counter's name ([`CounterError::counter`]).
        name: Option<String>,
    },

    /// An argument was NULL, empty, too long or out of range (package errno
    /// 9003), refused by the routine or, before any call, by the client.
    #[error("{message}")]
    InvalidArgument {
        message: String,
        /// The counter's name, when the argument was one counter's
        /// ([`CounterError::counter`]).
        name: Option<String>,
    },

    /// The write would take a bounded counter's total past its floor or
    /// its ceiling (package errno 9004, see `bound`): it changed nothing.
    #[error("{message}")]
    PastBound {
        message: String,
        /// The counter's name ([`CounterError::counter`]).
        name: Option<String>,
        /// Which bound it would pass.
        bound: Bound,
        /// How far the total could still move toward that bound when the
        /// write was refused: a take of at most this much would have fit.
        room: u64,
    },

    /// The write would take the bucket it lands in past its counter's
    /// limit per `period` (package errno 9004, see `counter_limit`): it
    /// changed nothing.
    #[error("{message}")]
    PastLimit {
        message: String,
        /// The counter's name ([`CounterError::counter`]).
        name: Option<String>,
        /// The period whose bucket is full.
        period: Period,
        /// What each bucket of the period may count.
        limit: i64,
        /// What the bucket could still take when the write was refused: a
        /// write of at most this much would have fitted.
        room: u64,
        /// When the bucket ends, and the next one starts with its whole
        /// limit.
        resets: SystemTime,
    },

    /// A routine of the package stayed missing (1305) for all of
    /// [`crate::defaults::REINSTALL_WINDOW`]: the package is not installed, or was
    /// installed with another prefix.
    #[error(
        "the counter package is not installed: {0}; install it with `slotted-counters install` (with the prefix this client uses)"
    )]
    NotInstalled(String),

    /// The account may not call a routine of the package (1370), and still
    /// might not after [`crate::defaults::REINSTALL_WINDOW`]: it was never
    /// granted EXECUTE on it, or, on MySQL, a re-install dropped the
    /// routine, which revokes its grants, and nobody granted them again.
    #[error(
        "this account may not call a routine of the counter package: {0}; grant it EXECUTE on the package's routines (`slotted-counters install --app-user`, which an upgrade on MySQL runs again)"
    )]
    NotGranted(String),

    /// The call's routine is missing (1305) because the database's package
    /// was generated without a feature the call needs, as
    /// `counter_package()` says: it fails at once, where a routine a
    /// re-install is replacing is waited for.
    #[error(
        "the counter package in this database lacks the feature {feature}, which {call} needs (it is `{package}`); install one with it: `slotted-counters install --features {with_it}`"
    )]
    FeatureMissing {
        /// The feature's name, as `--features` takes it.
        feature: &'static str,
        /// The call that needs it.
        call: &'static str,
        /// What `counter_package()` answered.
        package: String,
        /// The features installed, and this one.
        with_it: String,
    },

    /// Another reconcile of the same counters held their lock for all of
    /// [`crate::defaults::RECONCILE_WAIT`]: nothing was read or corrected,
    /// and the reconcile may run once the other is done.
    #[error("{message}")]
    Busy { message: String },

    /// The client refused to write on a read-only server (`read_only`, a
    /// replica most often): a reconcile corrects on the primary. A server's
    /// own refusal of a write as read-only is a
    /// [`Server`](CounterError::Server) error of kind
    /// [`ErrorKind::ReadOnly`].
    #[error("{message}")]
    ReadOnly { message: String },

    /// The server answered with any other error: a privilege missing, a
    /// deadlock that outlasted the retries.
    #[error("ERROR {code} ({sqlstate}): {message}")]
    Server {
        /// The server's error number.
        code: u16,
        /// The SQLSTATE the server sent with it.
        sqlstate: String,
        message: String,
        #[source]
        source: DriverError,
    },

    /// The connection failed before the call's answer arrived: the server
    /// may have applied the call, or not.
    #[error("the connection failed: {message}")]
    Connection {
        message: String,
        #[source]
        source: DriverError,
    },

    /// The server answered, but not as the call expects: no row, or too
    /// few or too many values, where a read returns one row of its
    /// values; a value that is no BIGINT. Something between the client and
    /// the database (a proxy) or another server answered for it. The call
    /// ran to its end, so it is not sent again.
    #[error("the answer is not the call's: {message}")]
    UnexpectedAnswer {
        message: String,
        #[source]
        source: Option<DriverError>,
    },

    /// No connection could be opened for the call (the server unreachable,
    /// TLS refused): the call was never sent.
    #[error("cannot connect: {message}")]
    Connect {
        message: String,
        #[source]
        source: DriverError,
    },

    /// The pool had no connection to give within its timeout: the call was
    /// never sent.
    #[error("no connection from the pool within its timeout: {message}")]
    PoolTimedOut {
        message: String,
        #[source]
        source: DriverError,
    },

    /// The flush carrying this call's delta for a coalescing handle
    /// panicked: whether the delta was applied is unknown.
    #[error("the flush carrying this delta panicked; whether it was applied is unknown")]
    FlushPanicked,
}

/// What kind of error a [`CounterError`] is ([`CounterError::kind`]): one
/// per variant, with two more of a server's errors told apart. An
/// application matches on it where the variant's fields are not needed,
/// and logs or counts by [`ErrorKind::as_str`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// [`CounterError::NotFound`].
    NotFound,
    /// [`CounterError::AlreadyExists`].
    AlreadyExists,
    /// [`CounterError::InvalidArgument`].
    InvalidArgument,
    /// [`CounterError::PastBound`].
    PastBound,
    /// [`CounterError::PastLimit`].
    PastLimit,
    /// [`CounterError::NotInstalled`].
    NotInstalled,
    /// [`CounterError::NotGranted`].
    NotGranted,
    /// [`CounterError::FeatureMissing`].
    FeatureMissing,
    /// [`CounterError::Busy`].
    Busy,
    /// [`CounterError::ReadOnly`], or a server's refusal of a write as
    /// read-only: `read_only` or `super_read_only` (1290, a replica most
    /// often) or a transaction started `READ ONLY` (1792).
    ReadOnly,
    /// A server error that [`CounterError::is_retryable`]: a conflict with
    /// another transaction (a deadlock, a lock wait timeout, a cluster's
    /// certification) that may be gone at once.
    Conflict,
    /// Any other [`CounterError::Server`] error.
    Server,
    /// [`CounterError::Connection`].
    Connection,
    /// [`CounterError::UnexpectedAnswer`].
    UnexpectedAnswer,
    /// [`CounterError::Connect`].
    Connect,
    /// [`CounterError::PoolTimedOut`].
    PoolTimedOut,
    /// [`CounterError::FlushPanicked`].
    FlushPanicked,
}

impl ErrorKind {
    /// The kind in `snake_case`, as a log field or a metric's label takes
    /// it: `not_found`, `past_limit`, `read_only`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::NotFound => "not_found",
            ErrorKind::AlreadyExists => "already_exists",
            ErrorKind::InvalidArgument => "invalid_argument",
            ErrorKind::PastBound => "past_bound",
            ErrorKind::PastLimit => "past_limit",
            ErrorKind::NotInstalled => "not_installed",
            ErrorKind::NotGranted => "not_granted",
            ErrorKind::FeatureMissing => "feature_missing",
            ErrorKind::Busy => "busy",
            ErrorKind::ReadOnly => "read_only",
            ErrorKind::Conflict => "conflict",
            ErrorKind::Server => "server",
            ErrorKind::Connection => "connection",
            ErrorKind::UnexpectedAnswer => "unexpected_answer",
            ErrorKind::Connect => "connect",
            ErrorKind::PoolTimedOut => "pool_timed_out",
            ErrorKind::FlushPanicked => "flush_panicked",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl CounterError {
    /// A server's error, read the one way both drivers' errors are read:
    /// the package's refusals become their variants, a missing routine
    /// [`CounterError::NotInstalled`], anything else
    /// [`CounterError::Server`].
    pub(crate) fn from_server(
        code: u16,
        sqlstate: String,
        message: String,
        source: impl StdError + Send + Sync + 'static,
    ) -> Self {
        match code {
            errno::UNKNOWN_COUNTER => CounterError::not_found(message),
            errno::ALREADY_EXISTS => CounterError::already_exists(message),
            errno::INVALID_ARGUMENT => CounterError::invalid_argument(message),
            errno::PAST_BOUND => {
                let name = refusals::read_counter_name(&message);
                if let Some((bound, room)) = Bound::read(&message) {
                    return CounterError::PastBound { message, name, bound, room };
                }
                match PeriodLimit::read(&message) {
                    Some(PeriodLimit { period, limit, room, resets }) => {
                        CounterError::PastLimit { message, name, period, limit, room, resets }
                    }
                    None => CounterError::Server { code, sqlstate, message, source: Arc::new(source) },
                }
            }
            server_errno::NO_SUCH_ROUTINE => CounterError::NotInstalled(message),
            server_errno::ROUTINE_ACCESS_DENIED => CounterError::NotGranted(message),
            code => CounterError::Server { code, sqlstate, message, source: Arc::new(source) },
        }
    }

    /// The package's refusal of an unknown counter (9001), as `message`
    /// names it.
    pub(crate) fn not_found(message: String) -> Self {
        CounterError::NotFound { name: refusals::read_counter_name(&message), message }
    }

    /// The package's refusal of a counter that exists (9002), as `message`
    /// names it.
    pub(crate) fn already_exists(message: String) -> Self {
        CounterError::AlreadyExists { name: refusals::read_counter_name(&message), message }
    }

    /// The package's refusal of an argument (9003), of the counter
    /// `message` names, if it names one.
    pub(crate) fn invalid_argument(message: String) -> Self {
        CounterError::InvalidArgument { name: refusals::read_counter_name(&message), message }
    }

    /// The refusal (9003) the client makes of an argument of counter
    /// `name`, in the routines' `words`.
    pub(crate) fn invalid_about(words: &str, name: &str) -> Self {
        CounterError::invalid_argument(refusals::about(words, name)).about(name)
    }

    /// The refusal (9001) the client makes of a counter `name` that does
    /// not exist.
    pub(crate) fn unknown(name: &str) -> Self {
        CounterError::not_found(refusals::about(refusals::UNKNOWN_COUNTER, name)).about(name)
    }

    /// This error, about counter `counter`, the one its call named: that
    /// name, not the message's, which the routines cut at 128 characters
    /// and send in utf8mb3, where a character outside the BMP (an emoji)
    /// arrives as `?`.
    pub(crate) fn about(mut self, counter: &str) -> Self {
        if let CounterError::NotFound { name, .. }
        | CounterError::AlreadyExists { name, .. }
        | CounterError::InvalidArgument { name, .. }
        | CounterError::PastBound { name, .. }
        | CounterError::PastLimit { name, .. } = &mut self
        {
            *name = Some(counter.to_owned());
        }
        self
    }

    /// The kind of the error, one word to branch, log or count on.
    pub fn kind(&self) -> ErrorKind {
        match self {
            CounterError::NotFound { .. } => ErrorKind::NotFound,
            CounterError::AlreadyExists { .. } => ErrorKind::AlreadyExists,
            CounterError::InvalidArgument { .. } => ErrorKind::InvalidArgument,
            CounterError::PastBound { .. } => ErrorKind::PastBound,
            CounterError::PastLimit { .. } => ErrorKind::PastLimit,
            CounterError::NotInstalled(_) => ErrorKind::NotInstalled,
            CounterError::NotGranted(_) => ErrorKind::NotGranted,
            CounterError::FeatureMissing { .. } => ErrorKind::FeatureMissing,
            CounterError::Busy { .. } => ErrorKind::Busy,
            CounterError::ReadOnly { .. } => ErrorKind::ReadOnly,
            CounterError::Server { code, .. } if server_errno::READ_ONLY.contains(code) => {
                ErrorKind::ReadOnly
            }
            CounterError::Server { .. } if self.is_retryable() => ErrorKind::Conflict,
            CounterError::Server { .. } => ErrorKind::Server,
            CounterError::Connection { .. } => ErrorKind::Connection,
            CounterError::UnexpectedAnswer { .. } => ErrorKind::UnexpectedAnswer,
            CounterError::Connect { .. } => ErrorKind::Connect,
            CounterError::PoolTimedOut { .. } => ErrorKind::PoolTimedOut,
            CounterError::FlushPanicked => ErrorKind::FlushPanicked,
        }
    }

    /// The name of the counter the error is about: the one the call named,
    /// or in a batch the one the package refused, as its message names it
    /// (`None` where the message, cut at 128 characters, lost it; a
    /// character outside the BMP reads as `?`). `None` for an error about no
    /// one counter.
    pub fn counter(&self) -> Option<&str> {
        match self {
            CounterError::NotFound { name, .. }
            | CounterError::AlreadyExists { name, .. }
            | CounterError::InvalidArgument { name, .. }
            | CounterError::PastBound { name, .. }
            | CounterError::PastLimit { name, .. } => name.as_deref(),
            _ => None,
        }
    }

    /// A failure of the connection a call was sent on, described by `message`.
    pub(crate) fn connection(
        message: impl fmt::Display,
        source: impl StdError + Send + Sync + 'static,
    ) -> Self {
        CounterError::Connection { message: message.to_string(), source: Arc::new(source) }
    }

    /// An answer of the server the call cannot read, described by `message`.
    pub(crate) fn unexpected_answer(
        message: impl fmt::Display,
        source: Option<Box<dyn StdError + Send + Sync + 'static>>,
    ) -> Self {
        CounterError::UnexpectedAnswer { message: message.to_string(), source: source.map(Arc::from) }
    }

    /// A failure to open a connection for a call, described by `message`.
    pub(crate) fn connect(message: impl fmt::Display, source: impl StdError + Send + Sync + 'static) -> Self {
        CounterError::Connect { message: message.to_string(), source: Arc::new(source) }
    }

    /// The error number: the package's own (9001-9004) for its refusals,
    /// including those the client makes before a call, 1305 for a missing
    /// package, the server's for any other server error; `None` when no
    /// server answered.
    pub fn code(&self) -> Option<u16> {
        match self {
            CounterError::NotFound { .. } => Some(errno::UNKNOWN_COUNTER),
            CounterError::AlreadyExists { .. } => Some(errno::ALREADY_EXISTS),
            CounterError::InvalidArgument { .. } => Some(errno::INVALID_ARGUMENT),
            CounterError::PastBound { .. } | CounterError::PastLimit { .. } => Some(errno::PAST_BOUND),
            CounterError::NotInstalled(_) | CounterError::FeatureMissing { .. } => {
                Some(server_errno::NO_SUCH_ROUTINE)
            }
            CounterError::NotGranted(_) => Some(server_errno::ROUTINE_ACCESS_DENIED),
            CounterError::Server { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// The SQLSTATE, with [`CounterError::code`]'s number and only with
    /// one: the package's refusals carry `23000`, a missing routine or
    /// grant `42000`.
    pub fn sqlstate(&self) -> Option<&str> {
        match self {
            CounterError::NotFound { .. }
            | CounterError::AlreadyExists { .. }
            | CounterError::InvalidArgument { .. }
            | CounterError::PastBound { .. }
            | CounterError::PastLimit { .. } => Some(REFUSAL_SQLSTATE),
            CounterError::NotInstalled(_)
            | CounterError::NotGranted(_)
            | CounterError::FeatureMissing { .. } => Some("42000"),
            CounterError::Server { sqlstate, .. } => Some(sqlstate),
            _ => None,
        }
    }

    /// Whether the server rolled the call back for a reason that may be gone
    /// at once: a deadlock (1213, also Galera's lost certification), a lock
    /// wait timeout (1205), a row changed since the transaction's snapshot
    /// under MariaDB's snapshot isolation (1020), Group Replication's lost
    /// certification (3101), or its rollback of a local transaction for a
    /// remote one that needed its locks (1180 with error 149, "Lock
    /// deadlock; Retry transaction"); on TiDB, its rolled-back transactions
    /// (8002, 8005, 8022, 8028, 9007); through Vitess, a transaction vttablet
    /// aborted (1317 with `code = Aborted`). The call changed nothing and may run
    /// again; the clients do that themselves for calls outside the caller's
    /// transaction. A call made in the caller's transaction
    /// ([`crate::Counters::on`]) must run again with the whole transaction:
    /// the server rolled all of it back.
    pub fn is_retryable(&self) -> bool {
        match self {
            CounterError::Server { code, message, .. } => match *code {
                server_errno::DEADLOCK
                | server_errno::LOCK_WAIT_TIMEOUT
                | server_errno::RECORD_CHANGED
                | server_errno::CERTIFICATION_FAILED => true,
                server_errno::ERROR_DURING_COMMIT => package::is_commit_deadlock(*code, message),
                server_errno::QUERY_INTERRUPTED => message.contains("code = Aborted"),
                code => server_errno::TIDB_RETRYABLE.contains(&code),
            },
            _ => false,
        }
    }

    /// Whether the call met the package while a re-install replaced it, and
    /// changed nothing: a routine missing (1305) or, on MySQL, not yet
    /// granted again (1370) between its DROP and what follows, a write
    /// that found the trigger that applies it missing, which the package's
    /// CHECK refused ([`package::is_missing_trigger`]), a trigger that a
    /// Galera node was replacing as the write loaded it
    /// ([`package::is_trigger_being_replaced`]), or a prepared statement
    /// whose tables kept changing while the server prepared it again
    /// (1615, MySQL). Each lasts moments; the clients send the call again
    /// for up to [`crate::defaults::REINSTALL_WINDOW`].
    pub(crate) fn is_reinstall_gap(&self) -> bool {
        match self {
            CounterError::NotInstalled(_) | CounterError::NotGranted(_) => true,
            CounterError::Server { code: server_errno::NEED_REPREPARE, .. } => true,
            CounterError::Server { code, message, .. } => {
                package::is_missing_trigger(*code, message) || package::is_trigger_being_replaced(*code)
            }
            _ => false,
        }
    }

    /// Whether the call may have been applied although it failed: its
    /// connection failed after it was sent, the server interrupted it
    /// (`KILL QUERY`, 1317: a routine's statements in autocommit mode
    /// commit one by one, and `counter_add`'s write may have committed
    /// before the kill stopped the routine), the flush carrying it
    /// panicked, or its answer could not be read (the call ran). Sending it
    /// again may then count it twice. Every other error means the call
    /// changed nothing.
    pub fn may_have_applied(&self) -> bool {
        matches!(
            self,
            CounterError::Connection { .. }
                | CounterError::UnexpectedAnswer { .. }
                | CounterError::FlushPanicked
        ) || self.is_interrupted()
    }

    /// Whether the server interrupted the call (`KILL QUERY`, sent by query
    /// timeouts of proxies and drivers, pt-kill, an operator), somewhere in
    /// the routine: not Vitess's 1317 for a transaction it aborted, which
    /// changed nothing.
    pub(crate) fn is_interrupted(&self) -> bool {
        matches!(self, CounterError::Server { code: server_errno::QUERY_INTERRUPTED, message, .. }
            if !message.contains("code = Aborted"))
    }

    /// Whether the connection may hold a transaction the call left open, so
    /// that it must not serve another call before a rollback: MySQL runs no
    /// handler of a routine that `KILL QUERY` stopped, and a routine that
    /// had opened a transaction of its own leaves it open; the next calls
    /// on the connection would join it, and be lost with it. This
    /// version's routines open none, but a server may still run those of a
    /// package installed by an earlier one (a batch there opened one).
    /// Every other error leaves the session as it was.
    pub(crate) fn may_leave_a_transaction_open(&self) -> bool {
        self.is_interrupted()
    }

    /// Whether the failure may be one counter's alone, so that the other
    /// counters of a batch can still be applied, each on its own: an
    /// unknown counter, a bad name, a bound the counter's sum would pass, a
    /// slot that would leave BIGINT's range (1690, `ER_DATA_OUT_OF_RANGE`).
    pub(crate) fn is_about_a_counter(&self) -> bool {
        match self {
            CounterError::NotFound { .. }
            | CounterError::InvalidArgument { .. }
            | CounterError::PastBound { .. }
            | CounterError::PastLimit { .. } => true,
            CounterError::Server { code, .. } => *code == server_errno::OUT_OF_RANGE,
            _ => false,
        }
    }
}

/// What a refusal of a limit per period says, read from its message.
struct PeriodLimit {
    period: Period,
    limit: i64,
    room: u64,
    resets: SystemTime,
}

impl PeriodLimit {
    fn read(message: &str) -> Option<PeriodLimit> {
        let read = refusals::read_past_period_limit(message)?;
        Some(PeriodLimit {
            period: Period::from_name(read.period)?,
            limit: read.limit,
            room: read.room,
            resets: moment_of(read.resets)?,
        })
    }
}

/// The time of the end of a bucket as the server writes it in a refusal
/// and in `counter_room`: a UTC `YYYY-MM-DD hh:mm:ss`.
pub(crate) fn moment_of(text: &str) -> Option<SystemTime> {
    Some(UNIX_EPOCH + Duration::from_secs(u64::try_from(periods::utc_seconds(text)?).ok()?))
}

/// A bound of a bounded counter, as [`CounterError::PastBound`] names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// The least its total may be.
    Floor,
    /// The most its total may be.
    Ceiling,
}

impl Bound {
    /// The bound a refusal's message names, and the room it left.
    fn read(message: &str) -> Option<(Bound, u64)> {
        let (limit, room) = refusals::read_past_limit(message)?;
        Some((Bound::of(limit), room))
    }

    fn of(limit: Limit) -> Self {
        match limit {
            Limit::Floor => Bound::Floor,
            Limit::Ceiling => Bound::Ceiling,
        }
    }

    fn limit(self) -> Limit {
        match self {
            Bound::Floor => Limit::Floor,
            Bound::Ceiling => Limit::Ceiling,
        }
    }

    /// The refusal of a write that would take counter `name`'s total past
    /// this bound, whose value is `limit`, with `room` left toward it.
    pub(crate) fn refusal(self, name: &str, limit: i64, room: u64) -> CounterError {
        let words = refusals::past_limit(self.limit(), limit, room);
        let message = refusals::about(&words, name);
        CounterError::PastBound { message, name: Some(name.to_owned()), bound: self, room }
    }

    /// Whether `delta` moves a total toward this bound.
    pub(crate) fn is_approached_by(self, delta: i64) -> bool {
        match self {
            Bound::Floor => delta < 0,
            Bound::Ceiling => delta > 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(code: u16, message: &str) -> CounterError {
        CounterError::from_server(
            code,
            "HY000".to_owned(),
            message.to_owned(),
            std::io::Error::other(message.to_owned()),
        )
    }

    #[test]
    fn a_server_error_reads_as_the_package_documents_it() {
        let unknown = server(9001, "unknown counter: 'a'");
        assert!(
            matches!(&unknown, CounterError::NotFound { message, name: Some(name) } if message == "unknown counter: 'a'" && name == "a")
        );
        assert!(matches!(server(9002, ""), CounterError::AlreadyExists { name: None, .. }));
        assert!(matches!(server(9003, ""), CounterError::InvalidArgument { .. }));
        assert!(matches!(server(1305, ""), CounterError::NotInstalled(_)));
        let denied = server(1370, "execute command denied to user 'app'@'%' for routine 'app.counter_add'");
        assert!(matches!(&denied, CounterError::NotGranted(message) if message.contains("counter_add")));
        assert_eq!((denied.code(), denied.sqlstate()), (Some(1370), Some("42000")));
        let deadlock = server(1213, "Deadlock found when trying to get lock");
        assert_eq!((deadlock.code(), deadlock.sqlstate()), (Some(1213), Some("HY000")));
        assert_eq!(deadlock.to_string(), "ERROR 1213 (HY000): Deadlock found when trying to get lock");
        assert!(deadlock.source().is_some(), "the driver's error stays the source");
        assert_eq!(unknown.sqlstate(), Some("23000"));
    }

    #[test]
    fn each_refusal_names_its_counter_from_its_message_or_the_call() {
        let refusals = [
            server(9001, r"unknown counter: 'it\'s'"),
            server(9002, r"counter already exists: 'it\'s'"),
            server(9003, r"delta must be an integer, for counter: 'it\'s'"),
            server(9004, r"the write would pass the floor 0 (room left: 3), for counter: 'it\'s'"),
            server(
                9004,
                r"the write would pass the day limit 5 (room left: 0, resets 2026-11-28 00:00:00), for counter: 'it\'s'",
            ),
        ];
        let kinds = refusals.iter().map(CounterError::kind).collect::<Vec<_>>();
        assert_eq!(
            kinds,
            [
                ErrorKind::NotFound,
                ErrorKind::AlreadyExists,
                ErrorKind::InvalidArgument,
                ErrorKind::PastBound,
                ErrorKind::PastLimit
            ]
        );
        for refusal in &refusals {
            assert_eq!(refusal.counter(), Some("it's"), "{refusal:?}");
        }
        // Servers send messages in utf8mb3: an emoji arrives as `?`.
        let mangled = server(9001, "unknown counter: '名前 ?'");
        assert_eq!(mangled.counter(), Some("名前 ?"));
        assert_eq!(mangled.about("名前 😀").counter(), Some("名前 😀"), "the call's name wins");
        let long = "n".repeat(200);
        let cut = server(9001, &refusals::about(refusals::UNKNOWN_COUNTER, &long));
        assert_eq!(cut.counter(), None, "the message lost the name");
        assert_eq!(cut.about(&long).counter(), Some(long.as_str()), "the call gives it back");
        let no_counter = server(9003, "deltas name more than 4096 counters");
        assert_eq!(no_counter.about("x").counter(), Some("x"));
        assert_eq!(server(1213, "").about("x").counter(), None, "a deadlock is no counter's");
    }

    #[test]
    fn a_kind_tells_a_conflict_a_read_only_server_and_a_busy_lock_from_other_errors() {
        assert_eq!(server(1213, "").kind(), ErrorKind::Conflict);
        assert_eq!(server(1205, "").kind(), ErrorKind::Conflict);
        assert_eq!(
            server(1290, "The MariaDB server is running with the --read-only option").kind(),
            ErrorKind::ReadOnly
        );
        assert_eq!(
            server(1792, "Cannot execute statement in a READ ONLY transaction").kind(),
            ErrorKind::ReadOnly
        );
        assert_eq!(server(1142, "").kind(), ErrorKind::Server);
        assert_eq!(server(1305, "").kind(), ErrorKind::NotInstalled);
        assert_eq!(CounterError::Busy { message: String::new() }.kind().as_str(), "busy");
        assert_eq!(ErrorKind::PastLimit.to_string(), "past_limit");
    }

    #[test]
    fn a_code_comes_with_its_sqlstate_and_neither_without_the_other() {
        let errors = [
            server(9001, ""),
            server(9002, ""),
            server(9003, ""),
            server(9004, "the write would pass the floor 0 (room left: 3), for counter: 'a'"),
            server(
                9004,
                "the write would pass the day limit 5 (room left: 0, resets 2026-11-28 00:00:00), for counter: 'a'",
            ),
            server(1305, ""),
            server(1370, ""),
            server(1213, ""),
            CounterError::Busy { message: String::new() },
            CounterError::ReadOnly { message: String::new() },
            CounterError::connection("broken pipe", std::io::Error::other("broken pipe")),
            CounterError::FlushPanicked,
        ];
        for error in &errors {
            assert_eq!(error.code().is_some(), error.sqlstate().is_some(), "{error:?}");
            if let Some(9001..=9004) = error.code() {
                assert_eq!(error.sqlstate(), Some(REFUSAL_SQLSTATE), "{error:?}");
            }
        }
    }

    #[test]
    fn a_quotas_refusal_is_told_apart_from_a_bounds_with_its_period_room_and_reset() {
        let quota = server(
            9004,
            "the write would pass the hour limit 80 (room left: 2, resets 2026-03-10 11:00:00), for counter: 'a'",
        );
        let CounterError::PastLimit { period, limit, room, resets, .. } = &quota else {
            panic!("a quota's refusal: {quota:?}");
        };
        assert_eq!((*period, *limit, *room), (Period::Hour, 80, 2));
        assert_eq!(*resets, UNIX_EPOCH + Duration::from_secs(1_773_140_400), "2026-03-10 11:00:00 UTC");
        assert_eq!(quota.code(), Some(9004));
        let bound = server(9004, "the write would pass the ceiling 10 (room left: 0), for counter: 'a'");
        assert!(matches!(bound, CounterError::PastBound { bound: Bound::Ceiling, room: 0, .. }));
    }

    #[test]
    fn what_rolled_back_a_call_that_may_simply_run_again_is_retryable() {
        for code in [1020, 1205, 1213, 3101] {
            assert!(server(code, "").is_retryable(), "{code}");
        }
        // MySQL 9.7's messages, in English and German (`lc_messages`).
        let group_rollback = "Got error 149 - 'Lock deadlock; Retry transaction' during COMMIT";
        assert!(server(1180, group_rollback).is_retryable());
        assert!(server(1180, "Fehler 149 - 'Lock deadlock; Retry transaction' beim COMMIT").is_retryable());
        assert!(!server(1180, "Got error 28 - 'No space left on device' during COMMIT").is_retryable());
        assert!(!server(1180, "Fehler 1490 - 'x' beim COMMIT").is_retryable());
        assert!(!server(1180, "").is_retryable());
        for code in [1062, 1142, 1305, 9001] {
            assert!(!server(code, "").is_retryable(), "{code}");
        }
        for tidb in [8002, 8005, 8022, 8028, 9007] {
            assert!(server(tidb, "Write conflict").is_retryable(), "TiDB's {tidb}");
        }
        let vitess_rollback = "vttablet: rpc error: code = Aborted desc = transaction 1: ended at 2026-11-23 (exceeded timeout: 30s)";
        assert!(server(1317, vitess_rollback).is_retryable());
        assert!(
            !server(1317, "Query execution was interrupted").is_retryable(),
            "a KILL QUERY of MySQL's own"
        );
        let lost = CounterError::connection("broken pipe", std::io::Error::other("broken pipe"));
        assert!(!lost.is_retryable());
    }

    #[test]
    fn a_re_install_is_told_by_a_missing_routine_grant_or_trigger_a_trigger_being_replaced_or_a_statement_to_re_prepare()
     {
        let missing_trigger = [
            server(3819, "Check constraint 'counter_writes_applied' is violated."),
            server(4025, "CONSTRAINT `hits_spreads_applied` failed for `app`.`hits_spreads`"),
        ];
        let re_prepared = server(1615, "Prepared statement needs to be re-prepared");
        // A trigger that failed to load: MariaDB's words, or any others.
        let being_replaced = server(1064, "Unknown trigger has an error in its body: 'Query was empty'");
        let in_other_words = server(1064, "Unbekannter Trigger hat einen Fehler im Rumpf");
        let gaps = [server(1305, ""), server(1370, ""), re_prepared, being_replaced, in_other_words];
        for error in missing_trigger.iter().chain(&gaps) {
            assert!(error.is_reinstall_gap(), "{error:?}");
            assert!(!error.is_retryable() && !error.may_have_applied(), "{error:?}");
        }
        let other_check = server(4025, "CONSTRAINT `orders_positive` failed for `app`.`orders`");
        assert!(!other_check.is_reinstall_gap(), "a CHECK of the application's own");
        assert!(!server(1213, "").is_reinstall_gap());
    }

    #[test]
    fn only_a_call_whose_answer_was_lost_or_that_was_killed_may_have_applied() {
        let lost = CounterError::connection("broken pipe", std::io::Error::other("broken pipe"));
        assert!(lost.may_have_applied());
        let killed = server(1317, "Query execution was interrupted");
        assert!(killed.may_have_applied() && killed.may_leave_a_transaction_open());
        let vitess_rollback = server(1317, "vttablet: rpc error: code = Aborted desc = transaction 1 ended");
        assert!(!vitess_rollback.may_have_applied() && !vitess_rollback.may_leave_a_transaction_open());
        assert!(!server(1205, "").may_leave_a_transaction_open(), "the routine's handler ran");
        assert_eq!(lost.to_string(), "the connection failed: broken pipe");
        assert!(CounterError::FlushPanicked.may_have_applied());
        assert!(!server(1213, "").may_have_applied());
        assert!(!server(9001, "").may_have_applied());
        let timeout = CounterError::PoolTimedOut {
            message: "pool timed out".to_owned(),
            source: Arc::new(std::io::Error::other("pool timed out")),
        };
        assert!(!timeout.may_have_applied() && !timeout.is_retryable() && timeout.code().is_none());
        let refused = CounterError::connect("connection refused", std::io::Error::other("refused"));
        assert!(!refused.may_have_applied(), "a call without a connection was never sent");
    }
}
