//! Least privilege for applications: the GRANTs that let an existing
//! account count and read, and nothing else.
//!
//! The routines run with their definer's rights (`SQL SECURITY DEFINER`), so
//! an account needs no privilege on the table itself: EXECUTE on the
//! routines that add and read, and SELECT on the view of totals, are all an
//! application uses. Setup, reset, resize, compact and delete stay with the
//! administrator who installed the package.

use std::fmt;

use mysql::prelude::Queryable;

use crate::error::Error;
use slotted_counters_core::PackageOptions;
use slotted_counters_core::package::{self, Routine};

/// A MySQL account, `'user'@'host'`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    user: String,
    host: String,
}

impl Account {
    /// Parses `user@host` (quotes around either part allowed); `user` alone
    /// means any host, `%`, as `CREATE USER` takes it.
    pub fn parse(text: &str) -> Result<Self, Error> {
        let (user, host) = text.rsplit_once('@').unwrap_or((text, "%"));
        let unquote = |part: &str| {
            let part = part.trim();
            ['\'', '"', '`']
                .iter()
                .find_map(|&quote| part.strip_prefix(quote).and_then(|rest| rest.strip_suffix(quote)))
                .unwrap_or(part)
                .to_owned()
        };
        let (user, host) = (unquote(user), unquote(host));
        let invalid = |problem: &str| {
            Error::InvalidOption(format!(
                "--app-user {text:?}: {problem}; expected user@host, such as app@'10.0.0.%'"
            ))
        };
        if user.is_empty() || host.is_empty() {
            return Err(invalid("the user and the host must not be empty"));
        }
        if [&user, &host]
            .iter()
            .any(|part| part.contains(['\'', '"', '`', '\\']) || part.chars().any(char::is_control))
        {
            return Err(invalid("quotes, backslashes and control characters cannot be part of an account"));
        }
        Ok(Account { user, host })
    }
}

impl fmt::Display for Account {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "'{}'@'{}'", self.user, self.host)
    }
}

/// The GRANT statements that let `account` count and read with the package
/// `options` describe, in the connection's current database.
pub fn application_grants(options: &PackageOptions, account: &Account) -> Vec<String> {
    Routine::in_package(options)
        .into_iter()
        .filter(|routine| routine.for_applications())
        .map(|routine| {
            format!("GRANT EXECUTE ON {} `{}` TO {account}", routine.kind(), routine.name(options))
        })
        .chain([format!("GRANT SELECT ON `{}` TO {account}", package::totals_view(options))])
        .collect()
}

/// Fails, naming them, when any of `accounts` does not exist: a GRANT to an
/// unknown account would create it on some servers and fail on others.
pub fn check_accounts_exist(conn: &mut impl Queryable, accounts: &[Account]) -> Result<(), Error> {
    let mut unknown = Vec::new();
    for account in accounts {
        let found: Option<u32> = conn
            .exec_first(
                "SELECT COUNT(*) FROM mysql.user WHERE User = ? AND Host = ?",
                (&account.user, &account.host),
            )
            .map_err(|source| Error::AccountCheck { account: account.to_string(), source })?;
        if found.unwrap_or(0) == 0 {
            unknown.push(account.to_string());
        }
    }
    if unknown.is_empty() { Ok(()) } else { Err(Error::UnknownAccounts(unknown)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accounts_parse_with_or_without_host_and_quotes() {
        let parsed = |text| Account::parse(text).map(|account| account.to_string());
        assert_eq!(parsed("app@10.0.0.%").unwrap(), "'app'@'10.0.0.%'");
        assert_eq!(parsed("'app'@'%'").unwrap(), "'app'@'%'");
        assert_eq!(parsed("app").unwrap(), "'app'@'%'");
        assert_eq!(parsed("ops@team@localhost").unwrap(), "'ops@team'@'localhost'");
        for bad in ["@host", "app@", "ap'p@%", "app@ho\\st", "''@%"] {
            let error = parsed(bad).unwrap_err().to_string();
            assert!(error.starts_with(&format!("--app-user {bad:?}")), "{error}");
        }
    }

    #[test]
    fn applications_get_counting_and_reading_only() {
        let account = Account::parse("app@%").unwrap();
        let grants =
            application_grants(&PackageOptions::builder().prefix("hits_").build().unwrap(), &account);
        assert_eq!(
            grants,
            [
                "GRANT EXECUTE ON PROCEDURE `hits_add` TO 'app'@'%'",
                "GRANT EXECUTE ON PROCEDURE `hits_increment` TO 'app'@'%'",
                "GRANT EXECUTE ON PROCEDURE `hits_add_many` TO 'app'@'%'",
                "GRANT EXECUTE ON FUNCTION `hits_get` TO 'app'@'%'",
                "GRANT EXECUTE ON FUNCTION `hits_estimate` TO 'app'@'%'",
                "GRANT EXECUTE ON PROCEDURE `hits_add_once` TO 'app'@'%'",
                "GRANT EXECUTE ON PROCEDURE `hits_add_many_once` TO 'app'@'%'",
                "GRANT EXECUTE ON PROCEDURE `hits_forget_writes` TO 'app'@'%'",
                "GRANT EXECUTE ON PROCEDURE `hits_add_at` TO 'app'@'%'",
                "GRANT EXECUTE ON PROCEDURE `hits_add_many_at` TO 'app'@'%'",
                "GRANT EXECUTE ON FUNCTION `hits_get_period` TO 'app'@'%'",
                "GRANT EXECUTE ON FUNCTION `hits_get_range` TO 'app'@'%'",
                "GRANT EXECUTE ON PROCEDURE `hits_series` TO 'app'@'%'",
                "GRANT EXECUTE ON PROCEDURE `hits_expire_periods` TO 'app'@'%'",
                "GRANT SELECT ON `hits_totals` TO 'app'@'%'",
            ]
        );
    }
}
