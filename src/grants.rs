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
use slotted_counters_core::package::{self, Routine, server_errno};

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
        .chain(
            package::views_in_package(options)
                .into_iter()
                .map(|view| format!("GRANT SELECT ON `{view}` TO {account}")),
        )
        .collect()
}

/// The REVOKE statements that take back every privilege an account holds
/// on the package's routines and views, read from the grant tables; `None`
/// when this account may not read them. Dropping an object leaves the
/// grants on it (MariaDB keeps a routine's, both servers a view's), so an
/// uninstall revokes them first.
pub fn grants_on_package(
    conn: &mut impl Queryable,
    options: &PackageOptions,
) -> Result<Option<Vec<String>>, Error> {
    let routines: Vec<String> =
        Routine::in_package(options).into_iter().map(|routine| routine.name(options)).collect();
    let (totals, rooms) = (package::totals_view(options), package::rooms_view(options));
    let routine_grants = conn.exec::<(String, String, String, String, String), _, _>(
        format!(
            "SELECT `User`, `Host`, `Routine_type`, `Routine_name`, `Proc_priv` FROM mysql.procs_priv \
             WHERE `Db` = DATABASE() AND `Routine_name` IN ({})",
            vec!["?"; routines.len()].join(", ")
        ),
        routines,
    );
    let view_grants = conn.exec::<(String, String, String, String), _, _>(
        "SELECT `User`, `Host`, `Table_name`, `Table_priv` FROM mysql.tables_priv \
         WHERE `Db` = DATABASE() AND `Table_name` IN (?, ?)",
        (totals, rooms),
    );
    let (routine_grants, view_grants) = match (routine_grants, view_grants) {
        (Ok(routine_grants), Ok(view_grants)) => (routine_grants, view_grants),
        (Err(mysql::Error::MySqlError(error)), _) | (_, Err(mysql::Error::MySqlError(error)))
            if error.code == server_errno::TABLE_ACCESS_DENIED =>
        {
            return Ok(None);
        }
        (Err(error), _) | (_, Err(error)) => return Err(Error::Query(error)),
    };
    let routine_revokes = routine_grants.into_iter().filter_map(|(user, host, kind, routine, privileges)| {
        Some(format!(
            "REVOKE {} ON {kind} `{routine}` FROM {}",
            privilege_names(&privileges)?,
            Account { user, host }
        ))
    });
    let view_revokes = view_grants.into_iter().filter_map(|(user, host, view, privileges)| {
        Some(format!("REVOKE {} ON `{view}` FROM {}", privilege_names(&privileges)?, Account { user, host }))
    });
    Ok(Some(routine_revokes.chain(view_revokes).collect()))
}

/// A grant table's set of privileges (`Execute,Alter Routine,Grant`) as
/// REVOKE names them (`EXECUTE, ALTER ROUTINE, GRANT OPTION`); `None` for
/// an empty set.
fn privilege_names(privileges: &str) -> Option<String> {
    let names: Vec<String> = privileges
        .split(',')
        .filter(|privilege| !privilege.is_empty())
        .map(|privilege| match privilege {
            "Grant" => "GRANT OPTION".to_owned(),
            other => other.to_uppercase(),
        })
        .collect();
    (!names.is_empty()).then(|| names.join(", "))
}

/// The events of the database whose body calls a routine of the package
/// (such as those the docs suggest): they fail once it is uninstalled.
/// Only the events this account may see (EVENT on the database).
pub fn events_calling_package(
    conn: &mut impl Queryable,
    options: &PackageOptions,
) -> Result<Vec<String>, Error> {
    let events: Vec<(String, String)> = conn
        .query("SELECT EVENT_NAME, EVENT_DEFINITION FROM information_schema.EVENTS WHERE EVENT_SCHEMA = DATABASE()")
        .map_err(Error::Query)?;
    let routines: Vec<String> =
        Routine::in_package(options).into_iter().map(|routine| routine.name(options)).collect();
    Ok(events
        .into_iter()
        .filter(|(_, definition)| routines.iter().any(|routine| definition.contains(routine.as_str())))
        .map(|(name, _)| name)
        .collect())
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
    fn grant_tables_privileges_read_as_revoke_names_them() {
        assert_eq!(
            privilege_names("Execute,Alter Routine,Grant").unwrap(),
            "EXECUTE, ALTER ROUTINE, GRANT OPTION"
        );
        assert_eq!(privilege_names("Select,Show view").unwrap(), "SELECT, SHOW VIEW");
        assert_eq!(privilege_names(""), None);
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
                "GRANT EXECUTE ON FUNCTION `hits_utc_offset` TO 'app'@'%'",
                "GRANT EXECUTE ON PROCEDURE `hits_series` TO 'app'@'%'",
                "GRANT EXECUTE ON PROCEDURE `hits_expire_periods` TO 'app'@'%'",
                "GRANT EXECUTE ON PROCEDURE `hits_room` TO 'app'@'%'",
                "GRANT EXECUTE ON FUNCTION `hits_package` TO 'app'@'%'",
                "GRANT SELECT ON `hits_totals` TO 'app'@'%'",
                "GRANT SELECT ON `hits_rooms` TO 'app'@'%'",
            ]
        );
    }
}
