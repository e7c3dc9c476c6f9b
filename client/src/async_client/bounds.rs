//! The async client's call of bounded counters.

use std::ops::RangeBounds;

use super::{AsyncConnections, AsyncCounters};
use crate::error::CounterError;

impl<C: AsyncConnections> AsyncCounters<C> {
    /// Bounds counter `name`'s total to `bounds`, inclusive, as
    /// [`crate::Counters::bound`].
    pub async fn bound(&self, name: &str, bounds: impl RangeBounds<i64>) -> Result<(), CounterError> {
        self.engine.bound(name, bounds).await
    }
}
