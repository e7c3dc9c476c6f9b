//! What a package holds beyond the classic one (`--features`).
//!
//! The core is the 2012 package: one table, `counter_setup`,
//! `counter_increment`, `counter_add`, `counter_reset`, `counter_delete`,
//! `counter_get`, the view of totals and `counter_estimate`, a read of one
//! slot. Each [`Feature`] adds its own
//! routines, tables and triggers, and the core's routines name no table of
//! a feature the package lacks. A package with none is the classic one: one
//! table and no trigger.

use std::fmt;
use std::str::FromStr;

use crate::error::ConfigError;

/// A part of the package a DBA may leave out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Feature {
    /// `counter_resize` and `counter_compact`: change a counter's slot count,
    /// or sum its slots into one, through the table of changes and its
    /// trigger.
    Resize,
    /// `counter_add_many`: many counters' deltas in one call and one
    /// statement, through the table of write ids and its trigger.
    Batches,
    /// `counter_add_once` (and `counter_add_many_once` with batches) and
    /// `counter_forget_writes`: a write sent again under its id counts once.
    WriteIds,
    /// `counter_track` and the routines that count and read per minute,
    /// hour, day and month, with their three tables and a trigger.
    Periods,
    /// `counter_bound`: a floor and a ceiling a counter's total never
    /// passes, held by two columns of the slot table, the table of spreads
    /// and its trigger.
    Bounds,
}

impl Feature {
    /// Every feature, in the order `--features` lists them.
    pub const ALL: [Feature; 5] =
        [Feature::Resize, Feature::Batches, Feature::WriteIds, Feature::Periods, Feature::Bounds];

    /// The name `--features` takes.
    pub fn name(self) -> &'static str {
        match self {
            Feature::Resize => "resize",
            Feature::Batches => "batches",
            Feature::WriteIds => "write-ids",
            Feature::Periods => "periods",
            Feature::Bounds => "bounds",
        }
    }

    fn bit(self) -> u8 {
        1 << Feature::ALL.iter().position(|&feature| feature == self).expect("every feature is in ALL")
    }
}

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of features: what a package holds beside its core.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Features(u8);

impl Features {
    /// The classic package: the core alone.
    pub const NONE: Features = Features(0);
    /// Every feature: the default package.
    pub const ALL: Features = Features((1 << Feature::ALL.len()) - 1);

    /// Whether the set holds `feature`.
    pub fn has(self, feature: Feature) -> bool {
        self.0 & feature.bit() != 0
    }

    /// The set with `feature` added.
    pub fn with(self, feature: Feature) -> Features {
        Features(self.0 | feature.bit())
    }

    /// Whether the set holds every feature of `other`.
    pub fn covers(self, other: Features) -> bool {
        self.0 & other.0 == other.0
    }

    /// The features of the set, in [`Feature::ALL`]'s order.
    pub fn iter(self) -> impl Iterator<Item = Feature> {
        Feature::ALL.into_iter().filter(move |&feature| self.has(feature))
    }

    /// The features of `self` that `other` lacks.
    pub fn missing_from(self, other: Features) -> Features {
        Features(self.0 & !other.0)
    }

    /// Whether the set is empty: a classic package.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

impl Default for Features {
    fn default() -> Self {
        Features::ALL
    }
}

impl FromIterator<Feature> for Features {
    fn from_iter<I: IntoIterator<Item = Feature>>(features: I) -> Self {
        features.into_iter().fold(Features::NONE, Features::with)
    }
}

/// As `--features` takes it and the generated files record it: `all`,
/// `none`, or the names joined by commas.
impl fmt::Display for Features {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Features::ALL {
            return f.write_str("all");
        }
        if self.is_empty() {
            return f.write_str("none");
        }
        let names: Vec<&str> = self.iter().map(Feature::name).collect();
        f.write_str(&names.join(","))
    }
}

impl fmt::Debug for Features {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Features({self})")
    }
}

impl FromStr for Features {
    type Err = ConfigError;

    /// `all`, `none`, or feature names joined by commas, in any order.
    fn from_str(list: &str) -> Result<Self, ConfigError> {
        match list.trim() {
            "all" => return Ok(Features::ALL),
            "none" => return Ok(Features::NONE),
            _ => {}
        }
        list.split(',')
            .map(|name| {
                let name = name.trim();
                Feature::ALL.into_iter().find(|feature| feature.name() == name).ok_or_else(|| {
                    let known: Vec<&str> = Feature::ALL.iter().map(|feature| feature.name()).collect();
                    ConfigError::InvalidOption(format!(
                        "--features: unknown feature {name:?}: use all, none, or a list of {}",
                        known.join(", ")
                    ))
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_reads_back_as_it_is_written() {
        for list in ["all", "none", "batches", "resize,periods", "write-ids,bounds"] {
            assert_eq!(list.parse::<Features>().unwrap().to_string(), list);
        }
        let every: Features = "bounds,periods,write-ids,batches,resize".parse().unwrap();
        assert_eq!(every, Features::ALL, "the order written does not matter");
        assert!(Feature::ALL.into_iter().all(|feature| Features::ALL.has(feature)));
        assert!(Feature::ALL.into_iter().all(|feature| !Features::NONE.has(feature)));
    }

    #[test]
    fn an_unknown_name_is_refused_by_name() {
        let error = "batches,quotas".parse::<Features>().unwrap_err().to_string();
        assert!(error.contains("\"quotas\"") && error.contains("write-ids"), "{error}");
        assert!("".parse::<Features>().is_err(), "an empty list is no set: none says so");
    }
}
