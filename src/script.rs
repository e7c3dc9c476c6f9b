//! Splits SQL scripts into statements and runs them one by one.
//!
//! A driver cannot send a script as the `mysql` client does: `DELIMITER` is a
//! client directive (the server answers error 1064), and a multi-statement
//! string sent whole can report success although a later statement failed.
//! So the script is split here, understanding `DELIMITER`, quotes, backticks
//! and comments, and every statement's result is checked on its own.

use mysql::prelude::Queryable;

use crate::error::Error;

/// One statement of a script, without its delimiter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    /// 1-based position among the script's statements.
    pub number: usize,
    /// 1-based line of the script where the statement starts.
    pub line: usize,
    /// The statement's text. Comments are left out, as the `mysql` client
    /// leaves them out; executable comments (`/*! ... */`, MariaDB's
    /// `/*M! ... */`) and optimizer hints (`/*+ ... */`) are kept.
    pub text: String,
}

impl Statement {
    /// The statement's first line, trimmed: what an error report shows.
    pub fn first_line(&self) -> &str {
        self.text.lines().next().unwrap_or_default().trim()
    }
}

/// Splits `script` into statements.
pub fn split(script: &str) -> Result<Vec<Statement>, Error> {
    Splitter::new(script).run()
}

/// Runs every statement of `script` on `conn`, in order, and returns how many
/// ran. Stops at the first failure and reports that statement.
pub fn run(conn: &mut impl Queryable, script: &str) -> Result<usize, Error> {
    run_statements(conn, &split(script)?)
}

/// Runs `statements`, split from a script, in order, and returns how many
/// ran. Stops at the first failure and reports that statement.
pub fn run_statements(conn: &mut impl Queryable, statements: &[Statement]) -> Result<usize, Error> {
    for statement in statements {
        conn.query_drop(&statement.text).map_err(|source| Error::Statement {
            number: statement.number,
            line: statement.line,
            first_line: statement.first_line().to_owned(),
            source,
        })?;
    }
    Ok(statements.len())
}

struct Splitter<'a> {
    rest: &'a str,
    line: usize,
    delimiter: String,
    statements: Vec<Statement>,
    /// The statement being read, and the line its first code is on.
    current: String,
    start_line: Option<usize>,
    at_line_start: bool,
}

impl<'a> Splitter<'a> {
    fn new(script: &'a str) -> Self {
        Self {
            rest: script,
            line: 1,
            delimiter: ";".to_owned(),
            statements: Vec::new(),
            current: String::new(),
            start_line: None,
            at_line_start: true,
        }
    }

    fn run(mut self) -> Result<Vec<Statement>, Error> {
        while !self.rest.is_empty() {
            if self.at_line_start && self.try_delimiter_command()? {
                continue;
            }
            if self.rest.starts_with(self.delimiter.as_str()) {
                self.advance(self.delimiter.len(), false);
                self.finish();
                continue;
            }
            let c = self.rest.chars().next().unwrap_or_default();
            match c {
                '\'' | '"' | '`' => self.quoted(c)?,
                '#' => self.skip_line(),
                '-' if self.rest.starts_with("--")
                    && self.rest[2..].chars().next().is_none_or(char::is_whitespace) =>
                {
                    self.skip_line();
                }
                '/' if ["/*!", "/*M!", "/*+"].iter().any(|start| self.rest.starts_with(start)) => {
                    self.block_comment(true)?
                }
                '/' if self.rest.starts_with("/*") => self.block_comment(false)?,
                _ => self.advance(c.len_utf8(), true),
            }
        }
        self.finish();
        Ok(self.statements)
    }

    /// Handles a `DELIMITER x` line. Only valid between statements.
    fn try_delimiter_command(&mut self) -> Result<bool, Error> {
        let line_end = self.rest.find('\n').unwrap_or(self.rest.len());
        let line = self.rest[..line_end].trim();
        let mut words = line.split_whitespace();
        let is_command = words.next().is_some_and(|word| word.eq_ignore_ascii_case("delimiter"));
        if !is_command {
            return Ok(false);
        }
        if self.start_line.is_some() {
            return Err(
                self.error("DELIMITER inside an unfinished statement (a delimiter is missing before it)")
            );
        }
        let delimiter = match (words.next(), words.next()) {
            (Some(delimiter), None) => delimiter.to_owned(),
            _ => return Err(self.error("DELIMITER needs exactly one delimiter")),
        };
        if delimiter.contains(['\'', '"', '`', '\\']) {
            return Err(self.error("a delimiter cannot contain quotes or backslashes"));
        }
        self.delimiter = delimiter;
        self.current.clear();
        self.skip_line();
        Ok(true)
    }

    /// Copies a quoted string or identifier, delimiters inside it included.
    fn quoted(&mut self, quote: char) -> Result<(), Error> {
        let start_line = self.line;
        self.advance(1, true);
        loop {
            let Some(c) = self.rest.chars().next() else {
                self.line = start_line;
                return Err(self.error(&format!("unterminated {quote} quote")));
            };
            if c == '\\' && quote != '`' {
                let escaped = self.rest[1..].chars().next().map_or(0, char::len_utf8);
                self.advance(1 + escaped, true);
                continue;
            }
            self.advance(c.len_utf8(), true);
            if c == quote {
                // A doubled quote is an escaped one: keep reading.
                if self.rest.starts_with(quote) {
                    self.advance(1, true);
                    continue;
                }
                return Ok(());
            }
        }
    }

    fn block_comment(&mut self, keep: bool) -> Result<(), Error> {
        let Some(end) = self.rest[2..].find("*/") else {
            return Err(self.error("unterminated /* comment"));
        };
        let length = end + 4;
        if keep {
            self.advance(length, true);
        } else {
            self.line += self.rest[..length].matches('\n').count();
            self.rest = &self.rest[length..];
            self.current.push(' ');
            self.at_line_start = false;
        }
        Ok(())
    }

    /// Skips to the end of the line, keeping the newline.
    fn skip_line(&mut self) {
        let end = self.rest.find('\n').unwrap_or(self.rest.len());
        self.rest = &self.rest[end..];
        self.at_line_start = false;
    }

    /// Moves past `length` bytes, copying them into the statement when `keep`.
    fn advance(&mut self, length: usize, keep: bool) {
        let (taken, rest) = self.rest.split_at(length);
        for c in taken.chars() {
            if c == '\n' {
                self.line += 1;
            } else if keep && !c.is_whitespace() && self.start_line.is_none() {
                self.start_line = Some(self.line);
            }
        }
        if keep && (self.start_line.is_some() || !taken.trim().is_empty()) {
            self.current.push_str(taken);
        }
        self.at_line_start = taken.ends_with('\n');
        self.rest = rest;
    }

    fn finish(&mut self) {
        if let Some(line) = self.start_line.take() {
            self.statements.push(Statement {
                number: self.statements.len() + 1,
                line,
                text: self.current.trim().to_owned(),
            });
        }
        self.current.clear();
    }

    fn error(&self, problem: &str) -> Error {
        Error::Script { line: self.line, problem: problem.to_owned() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(script: &str) -> Vec<String> {
        split(script).unwrap().into_iter().map(|statement| statement.text).collect()
    }

    #[test]
    fn splits_on_semicolons() {
        assert_eq!(texts("SELECT 1;\nSELECT 2;  SELECT 3"), ["SELECT 1", "SELECT 2", "SELECT 3"]);
    }

    #[test]
    fn delimiter_command_changes_the_delimiter() {
        let script =
            "DELIMITER $$\nCREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2; END$$\ndelimiter ;\nSELECT 3;\n";
        assert_eq!(texts(script), ["CREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2; END", "SELECT 3"]);
    }

    #[test]
    fn delimiters_inside_quotes_and_backticks_are_text() {
        let script = r#"INSERT INTO `a;b` VALUES ('x;y', "z;w", 'it''s;', 'back\'slash;');SELECT 2;"#;
        assert_eq!(
            texts(script),
            [r#"INSERT INTO `a;b` VALUES ('x;y', "z;w", 'it''s;', 'back\'slash;')"#, "SELECT 2"]
        );
    }

    #[test]
    fn comments_are_dropped_but_executable_comments_kept() {
        let script = "-- header; not a statement\n# another;\nSELECT 1 /* a; b */ + 1;\n/*!40101 SET NAMES utf8mb4 */;\nSELECT 2 -- tail;\n;\nCREATE /*M! OR REPLACE */ VIEW v AS SELECT /*+ NO_ICP() */ 3;";
        assert_eq!(
            texts(script),
            [
                "SELECT 1   + 1",
                "/*!40101 SET NAMES utf8mb4 */",
                "SELECT 2",
                "CREATE /*M! OR REPLACE */ VIEW v AS SELECT /*+ NO_ICP() */ 3"
            ]
        );
    }

    #[test]
    fn double_dash_needs_whitespace_to_start_a_comment() {
        assert_eq!(texts("SELECT 1--1;"), ["SELECT 1--1"]);
    }

    #[test]
    fn comment_only_scripts_have_no_statements() {
        assert!(texts("-- nothing\n/* here */\n# at all\n\n").is_empty());
    }

    #[test]
    fn statements_know_their_number_and_line() {
        let statements = split("-- header\n\nSELECT 1;\n\nDELIMITER //\nSELECT\n  2//\n").unwrap();
        assert_eq!(statements.len(), 2);
        assert_eq!((statements[0].number, statements[0].line), (1, 3));
        assert_eq!((statements[1].number, statements[1].line), (2, 6));
        assert_eq!(statements[1].first_line(), "SELECT");
    }

    #[test]
    fn malformed_scripts_are_rejected_with_their_line() {
        let error = split("SELECT 1;\nSELECT 'open;\n").unwrap_err().to_string();
        assert_eq!(error, "cannot split the script at line 2: unterminated ' quote");
        let error = split("SELECT 1\nDELIMITER $$\n").unwrap_err().to_string();
        assert!(error.contains("line 2: DELIMITER inside an unfinished statement"), "{error}");
        let error = split("SELECT /* open\n").unwrap_err().to_string();
        assert!(error.contains("unterminated /* comment"), "{error}");
        let error = split("DELIMITER\n").unwrap_err().to_string();
        assert!(error.contains("exactly one delimiter"), "{error}");
    }
}
