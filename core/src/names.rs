//! The package's rule for counter names, checked in the client before a
//! call as every routine checks it: no longer than the package's name
//! length, no control character, no character the table's collation
//! ignores, no trailing space (nor a character the collation takes for
//! one, such as U+00A0). Either of the last three would make two
//! different names one counter (`"admin"` and `"admin"` followed by U+200B
//! are one row to `utf8mb4_unicode_ci`), or hide a character in a name.
//!
//! Refusing here keeps a coalescing flush from carrying a name its routine
//! would refuse. The characters a collation ignores are known here for
//! `utf8mb4_unicode_ci` and for the two that ignore none (the default,
//! `utf8mb4_bin`, and `utf8mb4_general_ci`); for any other, the routines
//! alone refuse them.

use crate::options::PackageOptions;
use crate::refusals::{self, CONTROL_CHARACTER, IGNORED_CHARACTER, NAME_HAS, TRAILING_SPACE};

/// The code points `utf8mb4_unicode_ci` ignores (their weight is empty),
/// as MariaDB 10.11 and MySQL 9.7 both report them; a live test compares
/// this table with each server's.
#[rustfmt::skip]
const IGNORED_BY_UNICODE_CI: &[(u32, u32)] = &[
    (0x0000, 0x0008), (0x000E, 0x001F), (0x007F, 0x0084), (0x0086, 0x009F), (0x0300, 0x0357),
    (0x035D, 0x0362), (0x0483, 0x0486), (0x0488, 0x0489), (0x0591, 0x05A1), (0x05A3, 0x05B9),
    (0x05BB, 0x05BD), (0x05BF, 0x05BF), (0x05C1, 0x05C2), (0x05C4, 0x05C4), (0x0600, 0x0603),
    (0x0610, 0x0615), (0x064B, 0x0658), (0x0670, 0x0670), (0x06D6, 0x06E4), (0x06E7, 0x06E8),
    (0x06EA, 0x06ED), (0x070F, 0x070F), (0x0711, 0x0711), (0x0730, 0x074A), (0x0901, 0x0903),
    (0x093C, 0x093C), (0x0951, 0x0954), (0x0981, 0x0983), (0x09BC, 0x09BC), (0x0A01, 0x0A03),
    (0x0A3C, 0x0A3C), (0x0A70, 0x0A71), (0x0A81, 0x0A83), (0x0ABC, 0x0ABC), (0x0B01, 0x0B03),
    (0x0B3C, 0x0B3C), (0x0B82, 0x0B82), (0x0C01, 0x0C03), (0x0C82, 0x0C83), (0x0CBC, 0x0CBC),
    (0x0D02, 0x0D03), (0x0D82, 0x0D83), (0x0E47, 0x0E4B), (0x0E4E, 0x0E4E), (0x0EC8, 0x0ECB),
    (0x0F18, 0x0F19), (0x0F35, 0x0F35), (0x0F37, 0x0F37), (0x0F39, 0x0F39), (0x0F7E, 0x0F7F),
    (0x0F82, 0x0F83), (0x0F86, 0x0F87), (0x0FC6, 0x0FC6), (0x1036, 0x1038), (0x17C6, 0x17D1),
    (0x17D3, 0x17D3), (0x17DD, 0x17DD), (0x180B, 0x180E), (0x1939, 0x193B), (0x200B, 0x200F),
    (0x202A, 0x202E), (0x2060, 0x2063), (0x206A, 0x206F), (0x20D0, 0x20EA), (0x302A, 0x302F),
    (0x3099, 0x309A), (0xFB1E, 0xFB1E), (0xFC5E, 0xFC63), (0xFCF2, 0xFCF4), (0xFE00, 0xFE0F),
    (0xFE20, 0xFE23), (0xFE70, 0xFE74), (0xFE76, 0xFE7F), (0xFEFF, 0xFEFF), (0xFF9E, 0xFF9F),
    (0xFFF9, 0xFFFB),
];

/// The code points other than U+0020 that `utf8mb4_unicode_ci` takes for a
/// space: a PAD SPACE collation ignores them at the end of a name.
const SPACES_IN_UNICODE_CI: &[(u32, u32)] =
    &[(0x00A0, 0x00A0), (0x2000, 0x200A), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000)];

/// The code points `collation` ignores, where the client knows them.
pub fn ignored_by(collation: &str) -> Option<&'static [(u32, u32)]> {
    match collation {
        "utf8mb4_unicode_ci" => Some(IGNORED_BY_UNICODE_CI),
        "utf8mb4_bin" | "utf8mb4_general_ci" => Some(&[]),
        _ => None,
    }
}

/// The code points other than U+0020 that `collation` takes for a space,
/// where the client knows them.
pub fn spaces_in(collation: &str) -> Option<&'static [(u32, u32)]> {
    match collation {
        "utf8mb4_unicode_ci" => Some(SPACES_IN_UNICODE_CI),
        "utf8mb4_bin" | "utf8mb4_general_ci" => Some(&[]),
        _ => None,
    }
}

/// What `collation` compares as equal, so that names which differ only so
/// are one counter; `None` for a binary collation, which folds nothing.
/// Under `utf8mb4_unicode_ci` and `utf8mb4_general_ci` every character
/// outside the Basic Multilingual Plane weighs the same, on MariaDB and
/// MySQL alike.
pub fn folded_by(collation: &str) -> Option<&'static str> {
    match collation {
        "utf8mb4_bin" => None,
        "utf8mb4_unicode_ci" | "utf8mb4_general_ci" => {
            Some("case and accents, and all characters outside the BMP, emoji included")
        }
        _ => Some("whatever it compares as equal (see the server's manual)"),
    }
}

fn holds(ranges: &[(u32, u32)], character: char) -> bool {
    ranges.iter().any(|&(first, last)| (first..=last).contains(&u32::from(character)))
}

/// The rule of one package's names.
#[derive(Debug, Clone)]
pub struct NameRule {
    length: u32,
    ignored: &'static [(u32, u32)],
    spaces: &'static [(u32, u32)],
}

impl NameRule {
    pub fn new(options: &PackageOptions) -> Self {
        NameRule {
            length: options.name_length(),
            ignored: ignored_by(options.collation()).unwrap_or_default(),
            spaces: spaces_in(options.collation()).unwrap_or_default(),
        }
    }

    /// Refuses a name no counter may have, as the routines do (errno 9003),
    /// with the message that says why.
    pub fn check(&self, name: &str) -> Result<(), String> {
        let refuse = |problem: &str| Err(refusals::about(&format!("{NAME_HAS} {problem}"), name));
        if name.chars().count() > self.length as usize {
            return Err(refusals::about(&refusals::long_name(self.length), name));
        }
        for character in name.chars() {
            let code = u32::from(character);
            if character.is_control() {
                return refuse(&format!("{CONTROL_CHARACTER} (U+{code:04X})"));
            }
            if holds(self.ignored, character) {
                return refuse(&format!("{IGNORED_CHARACTER} (U+{code:04X})"));
            }
        }
        if name.ends_with(|last| last == ' ' || holds(self.spaces, last)) {
            return refuse(TRAILING_SPACE);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_in(collation: &str, name: &str) -> Result<(), String> {
        NameRule::new(&PackageOptions::builder().collation(collation).build().unwrap()).check(name)
    }

    #[test]
    fn names_the_routines_refuse_are_refused_here() {
        for collation in ["utf8mb4_bin", "utf8mb4_unicode_ci"] {
            assert_eq!(check_in(collation, "downloads"), Ok(()));
            assert_eq!(check_in(collation, "名前 😀 é"), Ok(()));
            assert_eq!(check_in(collation, &"x".repeat(128)), Ok(()));
            for (name, problem) in [
                ("x".repeat(129), "is longer than 128 characters"),
                ("admin\u{1f}".to_owned(), "has a control character (U+001F)"),
                ("tab\there".to_owned(), "has a control character (U+0009)"),
                ("c1\u{85}".to_owned(), "has a control character (U+0085)"),
                ("admin ".to_owned(), "has a trailing space"),
            ] {
                let message = check_in(collation, &name).unwrap_err();
                assert!(message.starts_with(&format!("counter name {problem}: ")), "{name:?}: {message}");
            }
        }
        for (name, problem) in [
            ("admin\u{200b}", "has a character the collation ignores (U+200B)"),
            ("bom\u{feff}", "has a character the collation ignores (U+FEFF)"),
            ("admin\u{a0}", "has a trailing space"),
        ] {
            let message = check_in("utf8mb4_unicode_ci", name).unwrap_err();
            assert!(message.starts_with(&format!("counter name {problem}: ")), "{name:?}: {message}");
            assert_eq!(check_in("utf8mb4_bin", name), Ok(()), "the default compares {name:?} as written");
        }
    }

    #[test]
    fn a_collation_the_client_does_not_know_leaves_its_ignored_characters_to_the_routines() {
        let options = PackageOptions::builder().collation("utf8mb4_0900_ai_ci").build().unwrap();
        let rule = NameRule::new(&options);
        assert!(rule.check("admin\u{200b}").is_ok());
        assert!(rule.check("admin\u{1f}").is_err(), "control characters are refused whatever the collation");
    }
}
