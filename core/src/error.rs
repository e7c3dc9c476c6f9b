//! What can be wrong with what a user asks of the package or of a client
//! before anything reaches a server. Messages name the option or setting at
//! fault and, where there is one, the way out.

/// A refused package option or client setting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A package option is malformed or out of range.
    #[error("{0}")]
    InvalidOption(String),

    /// TLS settings the driver cannot honour, refused rather than weakened.
    #[error("{0}")]
    Tls(String),
}
