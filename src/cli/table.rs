//! Plain-text tables for terminal output: one header row, columns padded to
//! their widest cell, numbers aligned right.

/// Formats `rows` under `headers`. Cells that parse as numbers align right.
pub(super) fn format(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|header| header.chars().count()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let header_cells: Vec<String> = headers.iter().map(|header| (*header).to_owned()).collect();
    for row in std::iter::once(&header_cells).chain(rows) {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, &width)| {
                if cell.parse::<f64>().is_ok() {
                    format!("{cell:>width$}")
                } else {
                    format!("{cell:<width$}")
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn pads_columns_and_aligns_numbers_right() {
        let rows =
            vec![vec!["downloads".to_owned(), "12".to_owned()], vec!["ü".to_owned(), "1005".to_owned()]];
        assert_eq!(
            super::format(&["name", "total"], &rows),
            "name       total\ndownloads     12\nü           1005\n"
        );
    }
}
