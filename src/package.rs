//! What the stored-procedure package defines: its routines and the error
//! numbers they raise. Templates, the installer and the client all take these
//! from here, so the SQL and the Rust side cannot drift apart.

/// One routine of the package. Its name is the package prefix plus [`Routine::suffix`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Routine {
    Setup,
    Add,
    Increment,
    Reset,
    Resize,
    Compact,
    Delete,
    Get,
    Estimate,
}

impl Routine {
    /// Every routine any package has, in the order a package creates them.
    /// [`crate::PackageOptions::routines`] tells which a given package has.
    pub const ALL: [Routine; 9] = [
        Routine::Setup,
        Routine::Add,
        Routine::Increment,
        Routine::Reset,
        Routine::Resize,
        Routine::Compact,
        Routine::Delete,
        Routine::Get,
        Routine::Estimate,
    ];

    /// The part of the routine's name after the prefix.
    pub fn suffix(self) -> &'static str {
        match self {
            Routine::Setup => "setup",
            Routine::Add => "add",
            Routine::Increment => "increment",
            Routine::Reset => "reset",
            Routine::Resize => "resize",
            Routine::Compact => "compact",
            Routine::Delete => "delete",
            Routine::Get => "get",
            Routine::Estimate => "estimate",
        }
    }

    /// `FUNCTION` or `PROCEDURE`, as DROP and CREATE statements spell it.
    pub fn kind(self) -> &'static str {
        match self {
            Routine::Get | Routine::Estimate => "FUNCTION",
            _ => "PROCEDURE",
        }
    }
}

/// Suffix of the view of totals: `counter_totals` with the default prefix.
pub const TOTALS_VIEW_SUFFIX: &str = "totals";

/// `MYSQL_ERRNO` of the package's errors, all raised as `SQLSTATE '45000'`.
///
/// The numbers sit above every range MySQL and MariaDB use for their own errors.
pub mod errno {
    /// The named counter does not exist.
    pub const UNKNOWN_COUNTER: u16 = 61_001;
    /// `setup` was asked to create a counter that already exists.
    pub const ALREADY_EXISTS: u16 = 61_002;
    /// An argument is NULL, empty, too long or out of range.
    pub const INVALID_ARGUMENT: u16 = 61_003;
}

/// Width of the `description` column, in characters.
pub const DESCRIPTION_LENGTH: u32 = 255;

/// Character set of the table and of every text parameter.
pub const CHARSET: &str = "utf8mb4";

/// Collation of the table and of every text parameter. Case-insensitive, and
/// known to MySQL 8 and MariaDB alike; pinning it on the parameters avoids
/// error 1267 when a database's default collation differs.
pub const COLLATION: &str = "utf8mb4_unicode_ci";
