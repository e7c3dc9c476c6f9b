//! Counting the `?` parameters of a caller's SQL, as the server would see
//! them: outside strings, quoted names and comments.

/// How many `?` parameters `sql` takes: those outside its strings, quoted
/// names and comments. A comment the server runs (`/*! ... */`, `/*M!
/// ... */`) is code. Counted here because the drivers differ: the `mysql`
/// crate refuses a mismatch, sqlx sends parameters a statement does not
/// take, and the server ignores them.
pub(super) fn placeholders(sql: &str) -> usize {
    let chars: Vec<char> = sql.chars().collect();
    let at = |index: usize| chars.get(index).copied();
    let (mut count, mut index) = (0, 0);
    while let Some(character) = at(index) {
        index += 1;
        match character {
            '?' => count += 1,
            quote @ ('\'' | '"' | '`') => {
                while let Some(inside) = at(index) {
                    index += 1;
                    if inside == '\\' && quote != '`' {
                        index += 1;
                    } else if inside == quote {
                        // A doubled quote is one quote inside the string.
                        if at(index) != Some(quote) {
                            break;
                        }
                        index += 1;
                    }
                }
            }
            // `--` begins a comment only before a space: `a --1` is `a - -1`.
            '-' if at(index) == Some('-') && at(index + 1).is_none_or(char::is_whitespace) => {
                index = line_end(&chars, index);
            }
            '#' => index = line_end(&chars, index),
            '/' if at(index) == Some('*') && !matches!(at(index + 1), Some('!' | 'M')) => {
                index = (index + 1..chars.len())
                    .find(|&end| chars[end - 1] == '*' && chars[end] == '/' && end > index + 1)
                    .map_or(chars.len(), |end| end + 1);
            }
            _ => {}
        }
    }
    count
}

/// Where the line that holds `index` ends.
fn line_end(chars: &[char], index: usize) -> usize {
    chars[index..].iter().position(|&character| character == '\n').map_or(chars.len(), |end| index + end + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_counted_outside_strings_names_and_comments() {
        for (sql, taken) in [
            ("SELECT a, b FROM t WHERE k BETWEEN ? AND ?", 2),
            ("SELECT '?', \"?\", `?` FROM t WHERE k = ?", 1),
            ("SELECT 'it''s ?', 'a \\' ?' FROM t", 0),
            ("SELECT a -- why?\n, b # really?\n FROM t /* ? */ WHERE k >= ?", 1),
            ("SELECT a, b FROM t WHERE k >= ? /*!80000 AND k <= ? */", 2),
            ("SELECT a --1, b FROM t WHERE k = ?", 1),
            ("SELECT a, b FROM t WHERE k = ? --", 1),
            ("SELECT a, b FROM t /*/ ? */ WHERE k = ?", 1),
        ] {
            assert_eq!(placeholders(sql), taken, "{sql}");
        }
    }
}
