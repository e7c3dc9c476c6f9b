//! The SQL types of the package's columns, parameters and variables.

use slotted_counters_core::PackageOptions;
use slotted_counters_core::package;
use slotted_counters_core::periods::Period;

/// Width of every text parameter, in characters, whatever its column's.
/// A session with a non-strict `sql_mode` cuts a longer argument to this
/// width with only a warning: kept wider than any name or description may
/// be, a cut argument is still too long and meets the routine's own check,
/// instead of being cut to another counter's name. (A strict session rejects
/// an argument wider than this with error 1406.)
const TEXT_PARAMETER_LENGTH: u32 = 1024;

/// Character set of the table, of every text parameter and of every text
/// variable: a variable without one takes the database's, and a latin1
/// database cannot hold a non-latin1 name in it (error 1366).
const CHARSET: &str = "utf8mb4";

/// The types the templates declare, each text one in the package's
/// character set and collation.
pub(in crate::render) struct Types {
    pub(in crate::render) charset: &'static str,
    pub(in crate::render) collation: String,
    /// The most characters of a name and of a description.
    pub(in crate::render) name_length: u32,
    pub(in crate::render) description_length: u32,
    /// Every text parameter is [`TEXT_PARAMETER_LENGTH`] wide, so a
    /// name that is too long reaches the routine's own check instead of
    /// being cut to a valid name by a non-strict session.
    pub(in crate::render) name_type: String,
    pub(in crate::render) description_type: String,
    /// Text variables declare their character set (the database's may be
    /// latin1) and their collation (the server's default for the character
    /// set differs: `utf8mb4_0900_ai_ci` on MySQL 8+, `utf8mb4_general_ci` on
    /// MariaDB, and two of them in one comparison fail with 1267).
    pub(in crate::render) message_type: String,
    pub(in crate::render) description_variable_type: String,
    /// Every numeric parameter: text, as wide as the others, which the
    /// routine reads as a number itself (`read_number` in `_macros.sql`), so that
    /// neither a non-strict `sql_mode` nor a rounding changes an argument
    /// before the routine's check sees it.
    pub(in crate::render) number_type: String,
    /// Every time parameter: text, which the routine reads as a UTC moment
    /// itself (`read_moment` in `routines/_periods.sql`), so that no offset
    /// is moved into the session's time zone on the way in.
    pub(in crate::render) moment_type: String,
    /// A batch of deltas: JSON text, in the package's character set.
    pub(in crate::render) deltas_type: String,
    /// The parts of the statement a batch builds: hex literals, numbers
    /// and keywords.
    pub(in crate::render) statement_type: &'static str,
    /// The periods' columns' type, and the type of a routine's period: in
    /// the package's collation, as its names' are, since a parameter of no
    /// collation of its own takes the database's, and comparing it with a
    /// column of another (not `_bin`) fails (1267).
    pub(in crate::render) period_column_type: String,
    pub(in crate::render) period_type: String,
}

impl Types {
    pub(super) fn new(options: &PackageOptions) -> Self {
        // A routine's text in the package's collation: one declared without
        // takes the database's.
        let in_collation = |ty: &str| format!("{ty} CHARACTER SET {CHARSET} COLLATE {}", options.collation());
        let text_type = |length: u32| in_collation(&format!("VARCHAR({length})"));
        let period_names: Vec<String> = Period::ALL.iter().map(|period| format!("'{period}'")).collect();
        let period_column_type = format!("ENUM({})", period_names.join(", "));
        Types {
            charset: CHARSET,
            collation: options.collation().to_owned(),
            name_length: options.name_length(),
            description_length: package::DESCRIPTION_LENGTH,
            name_type: text_type(TEXT_PARAMETER_LENGTH),
            description_type: text_type(TEXT_PARAMETER_LENGTH),
            message_type: text_type(package::MESSAGE_LENGTH),
            description_variable_type: text_type(package::DESCRIPTION_LENGTH),
            number_type: text_type(TEXT_PARAMETER_LENGTH),
            moment_type: text_type(TEXT_PARAMETER_LENGTH),
            deltas_type: format!("LONGTEXT CHARACTER SET {CHARSET} COLLATE {}", options.collation()),
            statement_type: "LONGTEXT CHARACTER SET ascii COLLATE ascii_bin",
            period_type: in_collation(&period_column_type),
            period_column_type,
        }
    }
}
