//! A node of the server (or cluster) the bench runs on, connected: its
//! pool for the clients and the coalescing handles its rounds share.

use mysql::{Pool, PoolConstraints, PoolOpts};
use slotted_counters::{Coalescing, Counters};

use super::packages::package;
use super::report::ServerInfo;
use super::variant::Variant;
use crate::database;
use crate::error::Error;

/// One node, connected: what `prepare` keeps of it.
pub(super) struct Node {
    pub(super) pool: Pool,
    /// Its coalescing handles, without and with write ids, when a round
    /// needs them.
    pub(super) coalescing: Option<Coalescing>,
    pub(super) coalescing_ids: Option<Coalescing>,
    /// `user@host:port/database`.
    pub(super) target: String,
    /// The connection that read `server`: the first node's prepares.
    pub(super) conn: mysql::Conn,
    pub(super) server: ServerInfo,
}

impl Node {
    /// Connects to the node `url` names, for `clients` clients and the
    /// coalescing handles the rounds of `variants` share, on a package of up
    /// to `max_slots`. The coalescing variants' clients share the handles'
    /// connections; every other client holds one of its own.
    pub(super) fn connect(
        url: &str,
        clients: u32,
        flushes: u32,
        variants: &[Variant],
        max_slots: u32,
    ) -> Result<Self, Error> {
        let database::Connected { mut conn, opts, target, exposure } = database::connect(url)?;
        if let Some(exposure) = exposure {
            eprintln!("warning: {exposure}");
        }
        let server = ServerInfo::read(&mut conn)?;
        let max_connections: u32 =
            server.setting("max_connections").and_then(|value| value.parse().ok()).unwrap_or(0);
        if variants.iter().any(|variant| !variant.profile().coalesces) && max_connections <= clients {
            return Err(Error::Environment(format!(
                "{target} allows {max_connections} connections, and {clients} clients need more: \
                 raise max_connections or use fewer --clients"
            )));
        }
        let pool_of = |connections: u32| {
            let constraints = PoolConstraints::new(0, connections as usize).expect("min <= max");
            Pool::new(
                mysql::OptsBuilder::from_opts(opts.clone())
                    .pool_opts(PoolOpts::default().with_constraints(constraints)),
            )
            .map_err(|source| Error::Connect { target: target.clone(), source, hint: "" })
        };
        // Beside the clients: the round's own connection, and the
        // reconciler's when a round reconciles.
        let reconciler = variants.iter().any(|variant| variant.profile().reconciles);
        let pool = pool_of(clients + 1 + u32::from(reconciler))?;
        let handle = |variant: Variant, write_ids: bool| -> Result<Option<Coalescing>, Error> {
            if !variants.contains(&variant) {
                return Ok(None);
            }
            let package = package(Variant::Coalesced, None, max_slots, false)?.expect("a package variant");
            let builder =
                Counters::builder(pool_of(flushes)?).package(&package).max_flushes(flushes as usize);
            let counters = if write_ids { builder.write_ids() } else { builder }.build()?;
            Ok(Some(counters.coalescing()))
        };
        let coalescing = handle(Variant::Coalesced, false)?;
        let coalescing_ids = handle(Variant::CoalescedIds, true)?;
        Ok(Node { pool, coalescing, coalescing_ids, target, conn, server })
    }
}
