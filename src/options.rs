//! Generator options: what a user may ask for ([`PackageArgs`]) and the
//! validated form every template relies on ([`PackageOptions`]).
//!
//! Validation happens here, once, so templates only place values that are
//! known to be safe SQL identifiers and sane numbers.

use crate::error::Error;
use crate::package::Routine;

/// Counter table created when `--table` is not given.
pub const DEFAULT_TABLE: &str = "counters";
/// Routine name prefix used when `--prefix` is not given.
pub const DEFAULT_PREFIX: &str = "counter_";
/// Slots given to a counter whose setup passes NULL slots.
pub const DEFAULT_SLOTS: u32 = 5;
/// Largest slot count `counter_setup` accepts unless `--max-slots` says otherwise.
pub const DEFAULT_MAX_SLOTS: u32 = 1024;
/// Width of the `counter_name` column unless `--name-length` says otherwise.
pub const DEFAULT_NAME_LENGTH: u32 = 50;
/// Slot numbers are stored as SMALLINT UNSIGNED.
pub const SLOT_LIMIT: u32 = 65_535;
/// Longest counter name we allow: the name is the primary key's first part,
/// and 255 utf8mb4 characters stay well inside InnoDB's 3072-byte key limit.
pub const NAME_LENGTH_LIMIT: u32 = 255;
/// MySQL and MariaDB reject table and routine names longer than this.
pub const IDENTIFIER_LIMIT: usize = 64;

/// Package options as a user gives them: on the command line, or filled in
/// by a program. `None` means "use the default".
#[derive(Debug, Clone, Default, PartialEq, Eq, clap::Args)]
pub struct PackageArgs {
    #[arg(long, value_name = "NAME", help = format!("Name of the counter table [default: {DEFAULT_TABLE}]"))]
    pub table: Option<String>,

    #[arg(long, value_name = "PREFIX", help = format!("Prefix of every routine name [default: {DEFAULT_PREFIX}]"))]
    pub prefix: Option<String>,

    #[arg(long, value_name = "N", help = format!("Slots for a counter whose setup passes NULL slots [default: {DEFAULT_SLOTS}]"))]
    pub default_slots: Option<u32>,

    #[arg(long, value_name = "N", help = format!("Largest slot count a setup may ask for [default: {DEFAULT_MAX_SLOTS}]"))]
    pub max_slots: Option<u32>,

    #[arg(long, value_name = "CHARS", help = format!("Longest counter name, in characters [default: {DEFAULT_NAME_LENGTH}]"))]
    pub name_length: Option<u32>,

    /// Hard-code N slots for every counter: setup always creates N rows and
    /// increments skip the slot-count lookup. Conflicts with --default-slots.
    #[arg(long, value_name = "N")]
    pub fixed_slots: Option<u32>,

    /// How an increment picks its slot: `random` spreads every client over
    /// all slots; `connection` gives each connection one slot of its own
    /// (CONNECTION_ID() % slots + 1) [default: random]
    #[arg(long, value_name = "CHOICE", value_enum)]
    pub slot_choice: Option<SlotChoice>,

    /// Lazy counters: an increment of an unknown counter creates it, and a
    /// slot row appears only when first hit (INSERT ... ON DUPLICATE KEY
    /// UPDATE). Needs --fixed-slots
    #[arg(long)]
    pub auto_create: bool,
}

/// How an increment picks the slot it adds to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum SlotChoice {
    /// Uniformly at random, per increment.
    #[default]
    Random,
    /// `CONNECTION_ID() % slots + 1`: one slot per connection.
    Connection,
}

impl SlotChoice {
    /// The flag value that selects this choice.
    pub fn name(self) -> &'static str {
        match self {
            SlotChoice::Random => "random",
            SlotChoice::Connection => "connection",
        }
    }
}

/// How many slots a counter gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotPolicy {
    /// Each setup chooses; NULL means `default`. Increments look the count up.
    Dynamic { default: u32 },
    /// Every counter has exactly this many slots, hard-coded in the routines.
    Fixed(u32),
}

/// Options that passed validation: identifiers match `[A-Za-z_][A-Za-z0-9_]*`
/// and fit in 64 characters, and every slot count is within `1..=max_slots`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageOptions {
    table: String,
    prefix: String,
    slots: SlotPolicy,
    max_slots: u32,
    name_length: u32,
    slot_choice: SlotChoice,
    auto_create: bool,
}

impl Default for PackageOptions {
    fn default() -> Self {
        Self {
            table: DEFAULT_TABLE.to_owned(),
            prefix: DEFAULT_PREFIX.to_owned(),
            slots: SlotPolicy::Dynamic { default: DEFAULT_SLOTS },
            max_slots: DEFAULT_MAX_SLOTS,
            name_length: DEFAULT_NAME_LENGTH,
            slot_choice: SlotChoice::Random,
            auto_create: false,
        }
    }
}

impl TryFrom<&PackageArgs> for PackageOptions {
    type Error = Error;

    fn try_from(args: &PackageArgs) -> Result<Self, Error> {
        let table = args.table.clone().unwrap_or_else(|| DEFAULT_TABLE.to_owned());
        check_identifier("--table", &table, &table)?;

        let prefix = args.prefix.clone().unwrap_or_else(|| DEFAULT_PREFIX.to_owned());
        let longest = Routine::ALL
            .iter()
            .map(|routine| format!("{prefix}{}", routine.suffix()))
            .max_by_key(String::len)
            .unwrap_or_default();
        check_identifier("--prefix", &prefix, &longest)?;

        let max_slots = args.max_slots.unwrap_or(DEFAULT_MAX_SLOTS);
        if !(1..=SLOT_LIMIT).contains(&max_slots) {
            return Err(invalid(format!(
                "--max-slots {max_slots} is out of range: it must be between 1 and {SLOT_LIMIT}"
            )));
        }

        let slots = match (args.fixed_slots, args.default_slots) {
            (Some(_), Some(_)) => {
                return Err(invalid(
                    "--fixed-slots and --default-slots cannot be used together: \
                     with fixed slots every counter has exactly that many"
                        .to_owned(),
                ));
            }
            (Some(fixed), None) => SlotPolicy::Fixed(check_slots("--fixed-slots", fixed, max_slots)?),
            (None, default) => SlotPolicy::Dynamic {
                default: check_slots("--default-slots", default.unwrap_or(DEFAULT_SLOTS), max_slots)?,
            },
        };

        let name_length = args.name_length.unwrap_or(DEFAULT_NAME_LENGTH);
        if !(1..=NAME_LENGTH_LIMIT).contains(&name_length) {
            return Err(invalid(format!(
                "--name-length {name_length} is out of range: it must be between 1 and {NAME_LENGTH_LIMIT}"
            )));
        }

        if args.auto_create && !matches!(slots, SlotPolicy::Fixed(_)) {
            return Err(invalid(
                "--auto-create needs --fixed-slots: a lazily created counter has only the slot rows \
                 that were hit, so its slot count cannot be looked up"
                    .to_owned(),
            ));
        }

        Ok(Self {
            table,
            prefix,
            slots,
            max_slots,
            name_length,
            slot_choice: args.slot_choice.unwrap_or_default(),
            auto_create: args.auto_create,
        })
    }
}

impl PackageOptions {
    /// The counter table's name.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// The prefix every routine name starts with.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The routines this package has: a fixed slot count cannot be resized.
    pub fn routines(&self) -> Vec<Routine> {
        Routine::ALL
            .into_iter()
            .filter(|&routine| routine != Routine::Resize || matches!(self.slots, SlotPolicy::Dynamic { .. }))
            .collect()
    }

    /// The name of the view of totals, prefix included.
    pub fn totals_view(&self) -> String {
        format!("{}{}", self.prefix, crate::package::TOTALS_VIEW_SUFFIX)
    }

    /// How increments pick their slot.
    pub fn slot_choice(&self) -> SlotChoice {
        self.slot_choice
    }

    /// Whether increments create unknown counters.
    pub fn auto_create(&self) -> bool {
        self.auto_create
    }

    /// The full name of one routine, prefix included.
    pub fn routine_name(&self, routine: Routine) -> String {
        format!("{}{}", self.prefix, routine.suffix())
    }

    /// Whether slot counts are chosen per counter or hard-coded.
    pub fn slots(&self) -> SlotPolicy {
        self.slots
    }

    /// The largest slot count a setup may ask for.
    pub fn max_slots(&self) -> u32 {
        self.max_slots
    }

    /// The width of the counter name column, in characters.
    pub fn name_length(&self) -> u32 {
        self.name_length
    }

    /// The COMMENT every routine carries: this tool's version and the
    /// options, so `status` can tell a current routine from a stale one.
    pub fn routine_comment(&self) -> String {
        format!("slotted-counters {} {}", env!("CARGO_PKG_VERSION"), self.to_args().join(" "))
    }

    /// The command-line flags that reproduce these options, in a fixed order,
    /// defaults included, so a generated file says exactly how it was made.
    pub fn to_args(&self) -> Vec<String> {
        let mut args =
            vec!["--table".to_owned(), self.table.clone(), "--prefix".to_owned(), self.prefix.clone()];
        match self.slots {
            SlotPolicy::Dynamic { default } => {
                args.extend(["--default-slots".to_owned(), default.to_string()]);
            }
            SlotPolicy::Fixed(slots) => args.extend(["--fixed-slots".to_owned(), slots.to_string()]),
        }
        args.extend([
            "--max-slots".to_owned(),
            self.max_slots.to_string(),
            "--name-length".to_owned(),
            self.name_length.to_string(),
            "--slot-choice".to_owned(),
            self.slot_choice.name().to_owned(),
        ]);
        if self.auto_create {
            args.push("--auto-create".to_owned());
        }
        args
    }
}

fn invalid(message: String) -> Error {
    Error::InvalidOption(message)
}

/// Checks `value` (given as `flag`) and the longest identifier built from it.
pub(crate) fn check_identifier(flag: &str, value: &str, longest: &str) -> Result<(), Error> {
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

fn check_slots(flag: &str, slots: u32, max_slots: u32) -> Result<u32, Error> {
    if slots == 0 || slots > max_slots {
        return Err(invalid(format!(
            "{flag} {slots} is out of range: it must be between 1 and --max-slots ({max_slots})"
        )));
    }
    Ok(slots)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn validate(args: PackageArgs) -> Result<PackageOptions, String> {
        PackageOptions::try_from(&args).map_err(|error| error.to_string())
    }

    #[test]
    fn defaults_match_the_classic_package() {
        let options = validate(PackageArgs::default()).unwrap();
        assert_eq!(options, PackageOptions::default());
        assert_eq!(options.table(), "counters");
        assert_eq!(options.routine_name(Routine::Increment), "counter_increment");
        assert_eq!(options.slots(), SlotPolicy::Dynamic { default: 5 });
        assert_eq!(options.max_slots(), 1024);
        assert_eq!(options.name_length(), 50);
    }

    #[test]
    fn identifiers_must_be_plain() {
        for bad in ["", "1abc", "counters; DROP TABLE x", "naïve", "a-b", "`x`"] {
            let error = validate(PackageArgs { table: Some(bad.into()), ..Default::default() }).unwrap_err();
            assert!(error.starts_with("--table"), "{bad:?}: {error}");
            let error = validate(PackageArgs { prefix: Some(bad.into()), ..Default::default() }).unwrap_err();
            assert!(error.contains("not a plain identifier"), "{bad:?}: {error}");
        }
        validate(PackageArgs {
            table: Some("_Hits2".into()),
            prefix: Some("hit_".into()),
            ..Default::default()
        })
        .unwrap();
    }

    #[test]
    fn routine_names_must_fit_in_64_characters() {
        let longest_suffix = Routine::ALL.iter().map(|r| r.suffix().len()).max().unwrap();
        let fits = "p".repeat(IDENTIFIER_LIMIT - longest_suffix);
        validate(PackageArgs { prefix: Some(fits.clone()), ..Default::default() }).unwrap();
        let error =
            validate(PackageArgs { prefix: Some(format!("{fits}p")), ..Default::default() }).unwrap_err();
        assert!(error.contains("65 characters"), "{error}");
        let error = validate(PackageArgs { table: Some("t".repeat(65)), ..Default::default() }).unwrap_err();
        assert!(error.contains("at most 64"), "{error}");
    }

    #[test]
    fn slot_counts_must_be_within_the_maximum() {
        let error = validate(PackageArgs { default_slots: Some(0), ..Default::default() }).unwrap_err();
        assert!(error.contains("--default-slots 0 is out of range"), "{error}");
        let error = validate(PackageArgs { default_slots: Some(1025), ..Default::default() }).unwrap_err();
        assert!(error.contains("--max-slots (1024)"), "{error}");
        let error = validate(PackageArgs { fixed_slots: Some(0), ..Default::default() }).unwrap_err();
        assert!(error.contains("--fixed-slots 0"), "{error}");
        let error = validate(PackageArgs { max_slots: Some(0), ..Default::default() }).unwrap_err();
        assert!(error.contains("--max-slots 0"), "{error}");
        let error = validate(PackageArgs { max_slots: Some(4), ..Default::default() }).unwrap_err();
        assert!(error.contains("--default-slots 5"), "a default above the maximum: {error}");
        let error =
            validate(PackageArgs { max_slots: Some(SLOT_LIMIT + 1), ..Default::default() }).unwrap_err();
        assert!(error.contains("65535"), "{error}");
        let options = validate(PackageArgs { fixed_slots: Some(64), ..Default::default() }).unwrap();
        assert_eq!(options.slots(), SlotPolicy::Fixed(64));
    }

    #[test]
    fn fixed_slots_exclude_a_default() {
        let error =
            validate(PackageArgs { fixed_slots: Some(8), default_slots: Some(8), ..Default::default() })
                .unwrap_err();
        assert!(error.contains("cannot be used together"), "{error}");
    }

    #[test]
    fn auto_create_needs_fixed_slots() {
        let error = validate(PackageArgs { auto_create: true, ..Default::default() }).unwrap_err();
        assert!(error.contains("--auto-create needs --fixed-slots"), "{error}");
        let options =
            validate(PackageArgs { auto_create: true, fixed_slots: Some(64), ..Default::default() }).unwrap();
        assert!(options.auto_create());
    }

    #[test]
    fn fixed_slot_packages_have_no_resize() {
        assert!(PackageOptions::default().routines().contains(&Routine::Resize));
        let fixed = validate(PackageArgs { fixed_slots: Some(8), ..Default::default() }).unwrap();
        assert_eq!(fixed.routines().len(), Routine::ALL.len() - 1);
        assert!(!fixed.routines().contains(&Routine::Resize));
    }

    #[test]
    fn name_length_is_bounded() {
        for bad in [0, NAME_LENGTH_LIMIT + 1] {
            let error = validate(PackageArgs { name_length: Some(bad), ..Default::default() }).unwrap_err();
            assert!(error.starts_with(&format!("--name-length {bad}")), "{error}");
        }
    }

    #[test]
    fn args_reproduce_the_options() {
        let args = PackageArgs {
            table: Some("hits".into()),
            prefix: Some("hit_".into()),
            fixed_slots: Some(64),
            max_slots: Some(128),
            name_length: Some(100),
            default_slots: None,
            slot_choice: Some(SlotChoice::Connection),
            auto_create: true,
        };
        let options = validate(args).unwrap();
        assert_eq!(
            options.to_args().join(" "),
            "--table hits --prefix hit_ --fixed-slots 64 --max-slots 128 --name-length 100 \
             --slot-choice connection --auto-create"
        );
    }
}
