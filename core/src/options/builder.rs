//! Options as a user gives them, and their validation into [`PackageOptions`].
//!
//! Messages name each option by its command-line flag, which is also what
//! the generated files record.

use super::{
    Cluster, DEFAULT_COLLATION, DEFAULT_MAX_SLOTS, DEFAULT_NAME_LENGTH, DEFAULT_PREFIX, DEFAULT_SLOTS,
    DEFAULT_TABLE, IDENTIFIER_LIMIT, NAME_LENGTH_LIMIT, PackageOptions, SLOT_LIMIT, SlotChoice, SlotPolicy,
};
use crate::error::ConfigError;
use crate::features::Features;
use crate::objects::{
    APPLIED_CHECK_SUFFIX, CHANGES_TABLE_SUFFIX, GRANTS_KEEPER_SUFFIX, PROBE_SUFFIX, Routine,
    TRACKED_WRITES_TABLE_SUFFIX, TRIGGER_SUFFIXES, WRITES_TABLE_SUFFIX,
};

/// Package options as a user gives them; what is not set takes its default.
/// [`build`](Self::build) validates them. With the feature `clap`, these
/// are also the command line's package flags, whose help the field
/// comments are.
///
/// ```
/// use slotted_counters_core::PackageOptions;
/// use slotted_counters_core::package::Routine;
///
/// let options = PackageOptions::builder().table("page_hits").prefix("hits_").build()?;
/// assert_eq!(Routine::Increment.name(&options), "hits_increment");
/// # Ok::<(), slotted_counters_core::ConfigError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct PackageOptionsBuilder {
    #[cfg_attr(feature = "clap", arg(long, value_name = "NAME", help = format!("Name of the counter table [default: {DEFAULT_TABLE}]")))]
    table: Option<String>,

    #[cfg_attr(feature = "clap", arg(long, value_name = "PREFIX", help = format!("Prefix of every routine name [default: {DEFAULT_PREFIX}]")))]
    prefix: Option<String>,

    #[cfg_attr(feature = "clap", arg(long, value_name = "N", help = format!("Slots for a counter whose setup passes NULL slots [default: {DEFAULT_SLOTS}]")))]
    default_slots: Option<u32>,

    #[cfg_attr(feature = "clap", arg(long, value_name = "N", help = format!("Largest slot count a setup may ask for [default: {DEFAULT_MAX_SLOTS}]")))]
    max_slots: Option<u32>,

    #[cfg_attr(feature = "clap", arg(long, value_name = "CHARS", help = format!("Longest counter name, in characters [default: {DEFAULT_NAME_LENGTH}]")))]
    name_length: Option<u32>,

    /// Hard-code N slots for every counter: setup always creates N rows and
    /// increments skip the slot-count lookup. Conflicts with --default-slots.
    #[cfg_attr(feature = "clap", arg(long, value_name = "N"))]
    fixed_slots: Option<u32>,

    /// How an increment picks its slot [default: random]
    #[cfg_attr(feature = "clap", arg(long, value_name = "CHOICE", value_enum))]
    slot_choice: Option<SlotChoice>,

    #[cfg_attr(feature = "clap", arg(long, value_name = "NAME", help = format!("Collation of the counter table and of every name: the default compares names as written; utf8mb4_unicode_ci folds case, accents and every emoji together [default: {DEFAULT_COLLATION}]")))]
    collation: Option<String>,

    /// Lazy counters: an increment of an unknown counter creates it, and a
    /// slot row appears only when first hit (INSERT ... ON DUPLICATE KEY
    /// UPDATE). Needs --fixed-slots
    #[cfg_attr(feature = "clap", arg(long))]
    auto_create: bool,

    /// With --auto-create: the most counters increments may create. An
    /// increment or batch that would create one more is refused (errno
    /// 9003); setup is refused too. Checked when a counter is created, by
    /// counting up to N names in the table's index; concurrent creations
    /// may pass it by as many as run at once
    #[cfg_attr(feature = "clap", arg(long, value_name = "N"))]
    max_counters: Option<u64>,

    /// Seconds a write id is kept: a write sent again with its id within
    /// them counts once. Writes with ids forget older ids as they go, a few
    /// at a time [default: 600]
    #[cfg_attr(feature = "clap", arg(long, value_name = "SECONDS"))]
    write_id_window: Option<u32>,

    /// Make the package for a multi-primary cluster. Implies --slot-choice
    /// node, and the reset certifies every slot, so that it erases
    /// increments acknowledged on other nodes before the call
    #[cfg_attr(feature = "clap", arg(long, value_name = "CLUSTER", value_enum))]
    cluster: Option<Cluster>,

    /// What the package holds beside the classic core (the table,
    /// setup, increment, add, reset, delete, get and the view of totals):
    /// all, none (the classic package: one table, no trigger), or a list of
    /// resize, batches, write-ids, periods, bounds [default: all]
    #[cfg_attr(feature = "clap", arg(long, value_name = "LIST"))]
    features: Option<Features>,
}

impl PackageOptionsBuilder {
    /// The counter table's name (`--table`).
    pub fn table(mut self, table: impl Into<String>) -> Self {
        self.table = Some(table.into());
        self
    }

    /// The prefix of every routine name (`--prefix`).
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// Slots for a counter whose setup passes NULL slots (`--default-slots`).
    pub fn default_slots(mut self, slots: u32) -> Self {
        self.default_slots = Some(slots);
        self
    }

    /// The largest slot count a setup may ask for (`--max-slots`).
    pub fn max_slots(mut self, slots: u32) -> Self {
        self.max_slots = Some(slots);
        self
    }

    /// The longest counter name, in characters (`--name-length`).
    pub fn name_length(mut self, chars: u32) -> Self {
        self.name_length = Some(chars);
        self
    }

    /// The longest counter name unless [`Self::name_length`] was given:
    /// what the tables of an earlier install hold, so that a re-install
    /// keeps their width.
    pub fn name_length_unless_given(mut self, chars: u32) -> Self {
        self.name_length.get_or_insert(chars);
        self
    }

    /// The features unless [`Self::features`] was given: those of the
    /// package a database holds, so that `status` compares it with what
    /// was installed.
    pub fn features_unless_given(mut self, features: Features) -> Self {
        self.features.get_or_insert(features);
        self
    }

    /// Every counter gets exactly this many slots (`--fixed-slots`).
    pub fn fixed_slots(mut self, slots: u32) -> Self {
        self.fixed_slots = Some(slots);
        self
    }

    /// How an increment picks its slot (`--slot-choice`).
    pub fn slot_choice(mut self, choice: SlotChoice) -> Self {
        self.slot_choice = Some(choice);
        self
    }

    /// The collation of the table and of every text parameter
    /// (`--collation`): a `utf8mb4_` collation the server knows.
    pub fn collation(mut self, collation: impl Into<String>) -> Self {
        self.collation = Some(collation.into());
        self
    }

    /// The multi-primary cluster the package is made for (`--cluster`);
    /// implies node-owned slots.
    pub fn cluster(mut self, cluster: Cluster) -> Self {
        self.cluster = Some(cluster);
        self
    }

    /// What the package holds beside the classic core (`--features`).
    pub fn features(mut self, features: Features) -> Self {
        self.features = Some(features);
        self
    }

    /// Whether an increment creates an unknown counter (`--auto-create`).
    pub fn auto_create(mut self, auto_create: bool) -> Self {
        self.auto_create = auto_create;
        self
    }

    /// The most counters an increment may create (`--max-counters`), for
    /// packages with `--auto-create`: an application that may name any
    /// counter could otherwise fill the table.
    pub fn max_counters(mut self, counters: u64) -> Self {
        self.max_counters = Some(counters);
        self
    }

    /// How long a write id is kept, in seconds (`--write-id-window`): a
    /// write sent again with its id within it counts once.
    pub fn write_id_window(mut self, seconds: u32) -> Self {
        self.write_id_window = Some(seconds);
        self
    }

    /// Validates the options. Messages name the option by its flag.
    pub fn build(&self) -> Result<PackageOptions, ConfigError> {
        let table = self.table.clone().unwrap_or_else(|| DEFAULT_TABLE.to_owned());
        check_identifier("--table", &table, &table)?;
        let prefix = self.prefix.clone().unwrap_or_else(|| DEFAULT_PREFIX.to_owned());
        check_prefix(&prefix)?;
        let max_slots = self.max_slots.unwrap_or(DEFAULT_MAX_SLOTS);
        if !(1..=SLOT_LIMIT).contains(&max_slots) {
            return Err(invalid(format!(
                "--max-slots {max_slots} is out of range: it must be between 1 and {SLOT_LIMIT}"
            )));
        }
        let slots = self.slot_policy(max_slots)?;
        let name_length = self.name_length.unwrap_or(DEFAULT_NAME_LENGTH);
        if !(1..=NAME_LENGTH_LIMIT).contains(&name_length) {
            return Err(invalid(format!(
                "--name-length {name_length} is out of range: it must be between 1 and {NAME_LENGTH_LIMIT}"
            )));
        }
        self.check_lazy_counters(slots)?;
        let collation = self.collation.clone().unwrap_or_else(|| DEFAULT_COLLATION.to_owned());
        check_collation(&collation)?;
        if self.write_id_window == Some(0) {
            return Err(invalid(
                "--write-id-window 0 is out of range: it must be at least 1 second, and well above \
                 the time a writer retries"
                    .to_owned(),
            ));
        }
        Ok(PackageOptions {
            table,
            prefix,
            slots,
            max_slots,
            name_length,
            slot_choice: self.slot_choice_for_cluster()?,
            auto_create: self.auto_create,
            max_counters: self.max_counters,
            write_id_window: self.write_id_window,
            collation,
            cluster: self.cluster,
            features: self.features.unwrap_or_default(),
        })
    }

    /// A fixed count, or a default for setups that pass none; within `max_slots`.
    fn slot_policy(&self, max_slots: u32) -> Result<SlotPolicy, ConfigError> {
        match (self.fixed_slots, self.default_slots) {
            (Some(_), Some(_)) => Err(invalid(
                "--fixed-slots and --default-slots cannot be used together: \
                 with fixed slots every counter has exactly that many"
                    .to_owned(),
            )),
            (Some(fixed), None) => Ok(SlotPolicy::Fixed(check_slots("--fixed-slots", fixed, max_slots)?)),
            (None, default) => Ok(SlotPolicy::Dynamic {
                default: check_slots("--default-slots", default.unwrap_or(DEFAULT_SLOTS), max_slots)?,
            }),
        }
    }

    /// Lazy counters need a fixed slot count and no cluster; a limit on
    /// their number needs them.
    fn check_lazy_counters(&self, slots: SlotPolicy) -> Result<(), ConfigError> {
        if self.auto_create && !matches!(slots, SlotPolicy::Fixed(_)) {
            return Err(invalid(
                "--auto-create needs --fixed-slots: a lazily created counter has only the slot rows \
                 that were hit, so its slot count cannot be looked up"
                    .to_owned(),
            ));
        }
        match self.max_counters {
            Some(0) => {
                return Err(invalid("--max-counters 0 is out of range: it must be at least 1".to_owned()));
            }
            Some(_) if !self.auto_create => {
                return Err(invalid(
                    "--max-counters needs --auto-create: without it only setup, an administrator's \
                     call, creates counters"
                        .to_owned(),
                ));
            }
            _ => {}
        }
        if let (Some(cluster), true) = (self.cluster, self.auto_create) {
            return Err(invalid(format!(
                "--cluster {} cannot be used with --auto-create: a lazy counter's slot rows appear \
                 when first hit, and a reset cannot see a row another node created and this one \
                 has not applied yet, so an increment acknowledged there could outlive the reset",
                cluster.name()
            )));
        }
        Ok(())
    }

    /// The slot choice asked for; a cluster's packages take node slots.
    fn slot_choice_for_cluster(&self) -> Result<SlotChoice, ConfigError> {
        match (self.cluster, self.slot_choice) {
            (Some(cluster), Some(choice)) if choice != SlotChoice::Node => Err(invalid(format!(
                "--cluster {} needs --slot-choice node, not {}: slots shared by nodes \
                 fail certification when two nodes write them at once",
                cluster.name(),
                choice.name()
            ))),
            (Some(_), _) => Ok(SlotChoice::Node),
            (None, choice) => Ok(choice.unwrap_or_default()),
        }
    }
}

/// A prefix that keeps every name the package makes a valid identifier.
fn check_prefix(prefix: &str) -> Result<(), ConfigError> {
    let longest = Routine::ALL
        .iter()
        .map(|routine| routine.suffix())
        .chain([PROBE_SUFFIX, GRANTS_KEEPER_SUFFIX, WRITES_TABLE_SUFFIX, CHANGES_TABLE_SUFFIX])
        .chain(TRIGGER_SUFFIXES)
        .map(|suffix| format!("{prefix}{suffix}"))
        .chain([format!("{prefix}{TRACKED_WRITES_TABLE_SUFFIX}{APPLIED_CHECK_SUFFIX}")])
        .max_by_key(String::len)
        .unwrap_or_default();
    check_identifier("--prefix", prefix, &longest)
}

fn invalid(message: String) -> ConfigError {
    ConfigError::InvalidOption(message)
}

/// Checks `value` (given as `flag`) and the longest identifier built from it.
fn check_identifier(flag: &str, value: &str, longest: &str) -> Result<(), ConfigError> {
    let mut chars = value.chars();
    let well_formed = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !well_formed {
        return Err(invalid(format!(
            "{flag} {value:?} is not a plain identifier: use letters, digits and \
             underscores, not starting with a digit"
        )));
    }
    if longest.len() > IDENTIFIER_LIMIT {
        return Err(invalid(format!(
            "{flag} {value:?} is too long: it makes `{longest}`, {} characters, \
             and MySQL allows at most {IDENTIFIER_LIMIT}",
            longest.len()
        )));
    }
    Ok(())
}

/// A collation of the package's character set, as a plain name. Whether the
/// server knows it is the server's to say, when the table is created.
fn check_collation(collation: &str) -> Result<(), ConfigError> {
    let well_formed = collation
        .strip_prefix("utf8mb4_")
        .is_some_and(|rest| !rest.is_empty() && rest.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
    if !well_formed {
        return Err(invalid(format!(
            "--collation {collation:?} is not a utf8mb4 collation: use a name such as \
             utf8mb4_unicode_ci, utf8mb4_bin or utf8mb4_0900_ai_ci"
        )));
    }
    Ok(())
}

fn check_slots(flag: &str, slots: u32, max_slots: u32) -> Result<u32, ConfigError> {
    if slots == 0 || slots > max_slots {
        return Err(invalid(format!(
            "{flag} {slots} is out of range: it must be between 1 and --max-slots ({max_slots})"
        )));
    }
    Ok(slots)
}

#[cfg(test)]
mod tests;
