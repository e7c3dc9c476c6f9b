//! How a client makes its calls: through the package's routines, or in
//! plain SQL for engines that run none. Both describe the same calls, and
//! the same runners run either.

use crate::call::{Answer, Call};
use crate::driver::{Connection, Owner};
use crate::error::CounterError;
use crate::plain::Plain;
use crate::routines::Routines;

#[derive(Debug)]
#[allow(clippy::large_enum_variant, reason = "one per client, made once and never moved on a hot path")]
pub enum Mode {
    Routines(Routines),
    Plain(Plain),
}

impl Mode {
    /// Runs `call` once on `conn`, which `owner`'s transaction may hold.
    pub(crate) async fn run(
        &self,
        conn: &mut impl Connection,
        call: Call<'_>,
        owner: Owner,
    ) -> Result<Answer, CounterError> {
        match self {
            Mode::Routines(routines) => routines.run(conn, call).await,
            Mode::Plain(plain) => plain.run(conn, call, owner).await,
        }
    }
}
