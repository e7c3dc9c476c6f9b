//! The one error type of the library. Messages name the file, statement or
//! option at fault and, where there is one, the way out.

use std::path::PathBuf;

/// Everything that can go wrong in `slotted-counters`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A generator option is malformed or out of range.
    #[error("{0}")]
    InvalidOption(String),

    /// `generate --check` found committed files that differ from a fresh render.
    #[error(
        "{} is out of date with this generator; run `slotted-counters generate {}` and commit the result",
        dir.display(),
        args.join(" ")
    )]
    Stale { dir: PathBuf, args: Vec<String> },

    /// A template failed to render; this is a bug in the generator.
    #[error("cannot render {file}: {source}")]
    Render { file: &'static str, source: askama::Error },

    /// Reading or writing a file failed.
    #[error("cannot {action} {}: {source}", path.display())]
    Io { action: &'static str, path: PathBuf, source: std::io::Error },

    /// A SQL script could not be split into statements.
    #[error("cannot split the script at line {line}: {problem}")]
    Script { line: usize, problem: String },

    /// A statement of a script failed on the server; nothing after it ran.
    #[error("statement {number} (line {line}) failed: `{first_line}`: {source}")]
    Statement { number: usize, line: usize, first_line: String, source: mysql::Error },
}

impl Error {
    /// The process exit code for this error: 2 for bad usage, 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::InvalidOption(_) => 2,
            _ => 1,
        }
    }
}
