use super::*;
use crate::options::flags;

fn validate(builder: PackageOptionsBuilder) -> Result<PackageOptions, String> {
    builder.build().map_err(|error| error.to_string())
}

fn options() -> PackageOptionsBuilder {
    PackageOptions::builder()
}

#[test]
fn defaults_match_the_classic_package() {
    let options = validate(options()).unwrap();
    assert_eq!(options, PackageOptions::default());
    assert_eq!(options.table(), "counters");
    assert_eq!(Routine::Increment.name(&options), "counter_increment");
    assert_eq!(options.slots(), SlotPolicy::Dynamic { default: 5 });
    assert_eq!(options.max_slots(), 1024);
    assert_eq!(options.name_length(), 128);
}

#[test]
fn identifiers_must_be_plain() {
    for bad in ["", "1abc", "counters; DROP TABLE x", "naïve", "a-b", "`x`"] {
        let error = validate(options().table(bad)).unwrap_err();
        assert!(error.starts_with("--table"), "{bad:?}: {error}");
        let error = validate(options().prefix(bad)).unwrap_err();
        assert!(error.contains("not a plain identifier"), "{bad:?}: {error}");
    }
    validate(options().table("_Hits2").prefix("hit_")).unwrap();
}

/// Routines, triggers and the checks on the tables triggers apply: the
/// longest is the tracked writes' check.
#[test]
fn every_name_the_prefix_makes_must_fit_in_64_characters() {
    let longest_suffix = Routine::ALL
        .iter()
        .map(|r| r.suffix())
        .chain([PROBE_SUFFIX])
        .chain(TRIGGER_SUFFIXES)
        .map(str::len)
        .chain([TRACKED_WRITES_TABLE_SUFFIX.len() + APPLIED_CHECK_SUFFIX.len()])
        .max()
        .unwrap();
    let fits = "p".repeat(IDENTIFIER_LIMIT - longest_suffix);
    validate(options().prefix(fits.clone())).unwrap();
    let error = validate(options().prefix(format!("{fits}p"))).unwrap_err();
    assert!(error.contains("65 characters"), "{error}");
    let error = validate(options().table("t".repeat(65))).unwrap_err();
    assert!(error.contains("at most 64"), "{error}");
}

#[test]
fn slot_counts_must_be_within_the_maximum() {
    let error = validate(options().default_slots(0)).unwrap_err();
    assert!(error.contains("--default-slots 0 is out of range"), "{error}");
    let error = validate(options().default_slots(1025)).unwrap_err();
    assert!(error.contains("--max-slots (1024)"), "{error}");
    let error = validate(options().fixed_slots(0)).unwrap_err();
    assert!(error.contains("--fixed-slots 0"), "{error}");
    let error = validate(options().max_slots(0)).unwrap_err();
    assert!(error.contains("--max-slots 0"), "{error}");
    let error = validate(options().max_slots(4)).unwrap_err();
    assert!(error.contains("--default-slots 5"), "a default above the maximum: {error}");
    let error = validate(options().max_slots(SLOT_LIMIT + 1)).unwrap_err();
    assert!(error.contains("65534"), "{error}");
    let options = validate(options().fixed_slots(64)).unwrap();
    assert_eq!(options.slots(), SlotPolicy::Fixed(64));
}

#[test]
fn fixed_slots_exclude_a_default() {
    let error = validate(options().fixed_slots(8).default_slots(8)).unwrap_err();
    assert!(error.contains("cannot be used together"), "{error}");
}

#[test]
fn auto_create_needs_fixed_slots() {
    let error = validate(options().auto_create(true)).unwrap_err();
    assert!(error.contains("--auto-create needs --fixed-slots"), "{error}");
    let options = validate(options().auto_create(true).fixed_slots(64)).unwrap();
    assert!(options.auto_create());
}

#[test]
fn a_write_id_window_is_a_second_or_more_and_named_only_when_set() {
    let error = validate(options().write_id_window(0)).unwrap_err();
    assert!(error.contains("--write-id-window 0 is out of range"), "{error}");
    assert_eq!(PackageOptions::default().write_id_window(), 600);
    assert!(!flags(&PackageOptions::default()).contains(&"--write-id-window".to_owned()));
    let options = validate(options().write_id_window(3600)).unwrap();
    assert_eq!(options.write_id_window(), 3600);
    assert!(flags(&options).ends_with(&["--write-id-window".to_owned(), "3600".to_owned()]));
}

#[test]
fn fixed_slot_packages_have_no_resize() {
    assert!(Routine::in_package(&PackageOptions::default()).contains(&Routine::Resize));
    let fixed = Routine::in_package(&validate(options().fixed_slots(8)).unwrap());
    assert_eq!(fixed.len(), Routine::ALL.len() - 1);
    assert!(!fixed.contains(&Routine::Resize));
}

#[test]
fn name_length_is_bounded() {
    for bad in [0, NAME_LENGTH_LIMIT + 1] {
        let error = validate(options().name_length(bad)).unwrap_err();
        assert!(error.starts_with(&format!("--name-length {bad}")), "{error}");
    }
}

#[test]
fn args_reproduce_the_options() {
    let options = options()
        .table("hits")
        .prefix("hit_")
        .fixed_slots(64)
        .max_slots(128)
        .name_length(100)
        .slot_choice(SlotChoice::Connection)
        .auto_create(true)
        .collation("utf8mb4_bin");
    assert_eq!(
        flags(&validate(options).unwrap()).join(" "),
        "--table hits --prefix hit_ --fixed-slots 64 --max-slots 128 --name-length 100 \
         --slot-choice connection --collation utf8mb4_bin --auto-create"
    );
}

#[test]
fn a_cluster_package_takes_node_slots() {
    for (cluster, name) in [(Cluster::Galera, "galera"), (Cluster::GroupReplication, "group-replication")] {
        let package = validate(options().cluster(cluster)).unwrap();
        assert_eq!(package.slot_choice(), SlotChoice::Node);
        assert!(validate(options().cluster(cluster).slot_choice(SlotChoice::Node)).is_ok());
        for shared in [SlotChoice::Random, SlotChoice::Connection] {
            let error = validate(options().cluster(cluster).slot_choice(shared)).unwrap_err();
            assert!(error.starts_with(&format!("--cluster {name} needs --slot-choice node")), "{error}");
        }
        let args = flags(&package).join(" ");
        assert!(
            args.ends_with(&format!("--slot-choice node --collation utf8mb4_bin --cluster {name}")),
            "{args}"
        );
    }
}

#[test]
fn a_cluster_package_has_no_lazy_counters() {
    for (cluster, name) in [(Cluster::Galera, "galera"), (Cluster::GroupReplication, "group-replication")] {
        let error = validate(options().cluster(cluster).fixed_slots(8).auto_create(true)).unwrap_err();
        assert!(error.starts_with(&format!("--cluster {name} cannot be used with --auto-create")), "{error}");
    }
}

#[test]
fn collations_must_be_utf8mb4() {
    for bad in ["latin1_swedish_ci", "utf8mb4_", "utf8mb4_bin; DROP TABLE x", "utf8_general_ci", ""] {
        let error = validate(options().collation(bad)).unwrap_err();
        assert!(error.starts_with("--collation") && error.contains("not a utf8mb4 collation"), "{error}");
    }
    let options = validate(options().collation("utf8mb4_0900_ai_ci")).unwrap();
    assert_eq!(options.collation(), "utf8mb4_0900_ai_ci");
    assert_eq!(PackageOptions::default().collation(), "utf8mb4_bin");
}
