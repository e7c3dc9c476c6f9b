//! The COMMENT each routine carries: the package's mark and a digest of
//! the routine's own CREATE statement. `status` tells a routine this
//! version installs from any other by it, and a change of one routine
//! changes no other routine's COMMENT; the version is said once, by
//! `counter_package()`.

use sha2::{Digest, Sha256};
use slotted_counters_core::package::ROUTINE_MARK;

/// What the templates place as every routine's COMMENT, for [`seal`] to
/// replace.
pub(super) const UNSEALED: &str = "slotted-counters sha256:unsealed";

/// `sql` with each [`UNSEALED`] COMMENT replaced by the mark and the first
/// 16 hex digits of the SHA-256 of the statement it is in: from its
/// `CREATE` to the `$$` that ends it, the placeholder included.
pub(super) fn seal(sql: &str) -> String {
    let mut sealed = String::with_capacity(sql.len());
    let mut rest = sql;
    while let Some(at) = rest.find(UNSEALED) {
        let create = rest[..at].rfind("CREATE ").unwrap_or(0);
        let end = rest[at..].find("$$").map_or(rest.len(), |end| at + end);
        let digest = Sha256::digest(&rest.as_bytes()[create..end]);
        let hex: String = digest[..8].iter().map(|byte| format!("{byte:02x}")).collect();
        sealed.push_str(&rest[..at]);
        sealed.push_str(&format!("{ROUTINE_MARK} sha256:{hex}"));
        rest = &rest[at + UNSEALED.len()..];
    }
    sealed.push_str(rest);
    sealed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn routine(body: &str) -> String {
        format!("DELIMITER $$\nCREATE FUNCTION `f`()\nCOMMENT '{UNSEALED}'\nRETURN {body}$$\n")
    }

    #[test]
    fn each_routine_gets_the_digest_of_its_own_statement() {
        let one = seal(&routine("1"));
        let two = seal(&routine("2"));
        assert!(!one.contains(UNSEALED) && one.contains("COMMENT 'slotted-counters sha256:"), "{one}");
        assert_ne!(one, two.replace("RETURN 2", "RETURN 1"), "another body, another digest");
        let both = seal(&format!("{}{}", routine("1"), routine("2")));
        assert_eq!(both, format!("{one}{two}"), "a routine's digest depends on it alone");
    }
}
