use slotted_counters_core::PackageOptionsBuilder;
use slotted_counters_core::options::flags;

use super::*;

#[test]
fn code_points_are_written_as_ranges_in_lines_that_fit() {
    assert_eq!(code_points(Some(&[(0x300, 0x357), (0x200B, 0x200B)])).unwrap(), "U+0300-U+0357, U+200B");
    assert_eq!(code_points(Some(&[])).unwrap(), "none");
    assert_eq!(code_points(None), None);
    let many = code_points(names::ignored_by("utf8mb4_unicode_ci")).unwrap();
    assert!(many.lines().count() > 1 && many.lines().all(|line| line.len() <= 80), "{many}");
}

/// The routines are created in the order of `Routine::ALL`, the order
/// `uninstall.sql` and `status` use, and each once.
#[test]
fn routines_are_created_in_their_canonical_order() {
    let variants: [PackageOptionsBuilder; 3] = [
        PackageOptions::builder(),
        PackageOptions::builder().fixed_slots(8),
        PackageOptions::builder().fixed_slots(8).auto_create(true),
    ];
    for builder in variants {
        let options = builder.build().unwrap();
        let sql = setup_sql(&options).unwrap();
        let positions: Vec<usize> = Routine::in_package(&options)
            .into_iter()
            .map(|routine| {
                let create =
                    format!("CREATE /*M! OR REPLACE */ {} `{}`(", routine.kind(), routine.name(&options));
                assert_eq!(sql.matches(&create).count(), 1, "{create} once in {:?}", flags(&options));
                sql.find(&create).unwrap_or_default()
            })
            .collect();
        assert!(positions.is_sorted(), "{:?}: {positions:?}", flags(&options));
        let probe = format!("CREATE FUNCTION `{}`()", package::probe_name(&options));
        assert!(sql.find(&probe) < positions.first().copied(), "the probe comes before any routine");
        let creates = sql
            .lines()
            .filter(|line| {
                line.starts_with("CREATE ") && (line.contains(" PROCEDURE ") || line.contains(" FUNCTION "))
            })
            .count();
        assert_eq!(
            creates,
            Routine::in_package(&options).len() + 2,
            "no routine beyond the package's, the probe and the grants keeper"
        );
        let keeper = format!("CREATE PROCEDURE `{}`(", package::grants_keeper_name(&options));
        assert!(sql.find(&keeper) < positions.first().copied(), "the grants keeper comes before any routine");
    }
}
