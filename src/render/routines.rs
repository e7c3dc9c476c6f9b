//! Each routine's CREATE statements, and the triggers, rendered by a
//! template of their own. askama inlines what a template includes into
//! one function: with every routine in one, rustc took over 10 GB to check
//! the crate, and two such checks at once ran a 24 GB machine out of
//! memory.

use askama::Template;
use slotted_counters_core::SlotChoice;
use slotted_counters_core::package::Routine;
use slotted_counters_core::refusals;

use super::context::{Context, ResetBody};

/// One template struct per routine file, each placing the package's values.
macro_rules! routine_templates {
    ($($name:ident => $path:tt),* $(,)?) => {
        $(
            #[derive(Template)]
            #[template(path = $path, escape = "none")]
            struct $name<'a> {
                p: &'a Context,
            }
        )*
    };
}

routine_templates! {
    NameProblem => "routines/name_problem.sql",
    ParseNumber => "routines/parse_number.sql",
    Spread => "routines/spread.sql",
    Setup => "routines/setup.sql",
    AddFeatured => "routines/add_featured.sql",
    Add => "routines/add.sql",
    Increment => "routines/increment.sql",
    PlanBatch => "routines/plan_batch.sql",
    AddMany => "routines/add_many.sql",
    ResetLazy => "routines/reset_lazy.sql",
    ResetCertified => "routines/reset_certified.sql",
    Reset => "routines/reset.sql",
    Resize => "routines/resize.sql",
    Compact => "routines/compact.sql",
    Delete => "routines/delete.sql",
    Get => "routines/get.sql",
    Estimate => "routines/estimate.sql",
    AddOnce => "routines/add_once.sql",
    AddManyOnce => "routines/add_many_once.sql",
    ForgetWrites => "routines/forget_writes.sql",
    Track => "routines/track.sql",
    TrackAtOffset => "routines/track_at_offset.sql",
    AddWithinLimit => "routines/add_within_limit.sql",
    AddAt => "routines/add_at.sql",
    AddManyAt => "routines/add_many_at.sql",
    GetPeriod => "routines/get_period.sql",
    GetRange => "routines/get_range.sql",
    UtcOffset => "routines/utc_offset.sql",
    Series => "routines/series.sql",
    ExpirePeriods => "routines/expire_periods.sql",
    Bound => "routines/bound.sql",
    Limit => "routines/limit.sql",
    Room => "routines/room.sql",
    Package => "routines/package.sql",
    Triggers => "_triggers.sql",
}

/// The statements that create `routine`, and for [`Routine::Reset`] the
/// body the package needs.
pub(super) fn routine(p: &Context, routine: Routine) -> askama::Result<String> {
    match routine {
        Routine::NameProblem => NameProblem { p }.render(),
        Routine::ParseNumber => ParseNumber { p }.render(),
        Routine::Spread => Spread { p }.render(),
        Routine::Setup => Setup { p }.render(),
        Routine::AddFeatured => AddFeatured { p }.render(),
        Routine::Add => Add { p }.render(),
        Routine::Increment => Increment { p }.render(),
        Routine::PlanBatch => PlanBatch { p }.render(),
        Routine::AddMany => AddMany { p }.render(),
        Routine::Reset => match p.reset_body {
            ResetBody::Lazy => ResetLazy { p }.render(),
            ResetBody::Certified => ResetCertified { p }.render(),
            ResetBody::Classic => Reset { p }.render(),
        },
        Routine::Resize => Resize { p }.render(),
        Routine::Compact => Compact { p }.render(),
        Routine::Delete => Delete { p }.render(),
        Routine::Get => Get { p }.render(),
        Routine::Estimate => Estimate { p }.render(),
        Routine::AddOnce => AddOnce { p }.render(),
        Routine::AddManyOnce => AddManyOnce { p }.render(),
        Routine::ForgetWrites => ForgetWrites { p }.render(),
        Routine::Track => Track { p }.render(),
        Routine::TrackAtOffset => TrackAtOffset { p }.render(),
        Routine::AddWithinLimit => AddWithinLimit { p }.render(),
        Routine::AddAt => AddAt { p }.render(),
        Routine::AddManyAt => AddManyAt { p }.render(),
        Routine::GetPeriod => GetPeriod { p }.render(),
        Routine::GetRange => GetRange { p }.render(),
        Routine::UtcOffset => UtcOffset { p }.render(),
        Routine::Series => Series { p }.render(),
        Routine::ExpirePeriods => ExpirePeriods { p }.render(),
        Routine::Bound => Bound { p }.render(),
        Routine::Limit => Limit { p }.render(),
        Routine::Room => Room { p }.render(),
        Routine::Package => Package { p }.render(),
    }
}

/// The triggers the package's tables have.
pub(super) fn triggers(p: &Context) -> askama::Result<String> {
    Triggers { p }.render()
}
