//! What the install and uninstall scripts check and keep around the routines.

use slotted_counters_core::package;
use slotted_counters_core::{Feature, PackageOptions};

/// The probe's checks, the grants' keeper, and the modes routines are
/// created in.
pub(in crate::render) struct Install {
    /// The procedure that checks, before anything changes, that the
    /// package may be installed here.
    pub(in crate::render) probe: String,
    /// The procedure that grants again, on MySQL, what accounts held on a
    /// routine the install dropped and created again.
    pub(in crate::render) grants_keeper: String,
    /// What the probe refuses to install over: the package's tables and
    /// views, each with the columns that tell it is the package's; its
    /// triggers with their tables; the mark every routine's COMMENT begins
    /// with.
    pub(in crate::render) relations: Vec<package::Relation>,
    pub(in crate::render) routine_mark: &'static str,
    /// The names of the features the package lacks, which the probe looks
    /// for in the installed package's `counter_package()` line, and of
    /// every feature, which a line without `--features` has.
    pub(in crate::render) lacked_features: Vec<&'static str>,
    pub(in crate::render) every_feature: String,
    /// The prefix as a LIKE pattern with `!` for its escape character: each
    /// `_` of it a literal.
    pub(in crate::render) prefix_pattern: String,
    pub(in crate::render) drop_features_variable: &'static str,
    /// The mode the package's routines and triggers are created in, and
    /// the variable keeping the installing session's meanwhile.
    pub(in crate::render) routine_sql_mode: &'static str,
    pub(in crate::render) installer_sql_mode: &'static str,
    /// The events the docs suggest for the package's features, which
    /// `uninstall.sql` names.
    pub(in crate::render) documented_events: Vec<String>,
}

impl Install {
    pub(super) fn new(options: &PackageOptions) -> Self {
        let tables = package::tables_in_package(options);
        let views = package::views_in_package(options);
        let features = options.features();
        Install {
            probe: package::probe_name(options),
            grants_keeper: package::grants_keeper_name(options),
            relations: package::relations(options)
                .into_iter()
                .filter(|relation| tables.contains(&relation.name) || views.contains(&relation.name))
                .collect(),
            routine_mark: package::ROUTINE_MARK,
            lacked_features: Feature::ALL
                .into_iter()
                .filter(|&feature| !features.has(feature))
                .map(Feature::name)
                .collect(),
            every_feature: Feature::ALL.map(Feature::name).join(","),
            prefix_pattern: options.prefix().replace('_', "!_"),
            drop_features_variable: package::DROP_FEATURES_VARIABLE,
            routine_sql_mode: package::ROUTINE_SQL_MODE,
            installer_sql_mode: package::INSTALLER_SQL_MODE_VARIABLE,
            documented_events: package::documented_events(options),
        }
    }
}
