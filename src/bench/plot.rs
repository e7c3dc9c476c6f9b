//! The throughput plot: increments per second against clients, one panel
//! per hold time, one line per variant, as SVG (no system fonts needed).

use std::path::Path;

use plotters::prelude::*;

use super::report::Report;
use crate::error::Error;

impl Report {
    /// Plots throughput against clients: one panel per hold time, one line
    /// per variant, each variant in the same colour in every panel.
    pub fn write_plot(&self, path: &Path) -> Result<(), Error> {
        let plot_error =
            |error: &dyn std::fmt::Display| Error::Plot { path: path.to_owned(), problem: error.to_string() };
        let mut holds: Vec<u32> = self.results.iter().map(|result| result.hold_ms).collect();
        holds.sort_unstable();
        holds.dedup();
        let mut labels: Vec<&str> = self.results.iter().map(|result| result.label.as_str()).collect();
        labels.sort_unstable();
        labels.dedup();
        let fewest = self.results.iter().map(|result| result.clients).min().unwrap_or(1);
        let most = self.results.iter().map(|result| result.clients).max().unwrap_or(1);
        let top = self.results.iter().map(|result| result.increments_per_second).fold(1.0, f64::max);

        let root = SVGBackend::new(path, (560 * holds.len().max(1) as u32, 620)).into_drawing_area();
        root.fill(&WHITE).map_err(|error| plot_error(&error))?;
        let root = root
            .titled(&format!("Increments per second, {}", self.server.version), ("sans-serif", 20))
            .map_err(|error| plot_error(&error))?;
        for (panel, &hold_ms) in root.split_evenly((1, holds.len().max(1))).iter().zip(&holds) {
            let mut chart = ChartBuilder::on(panel)
                .caption(format!("{hold_ms} ms held before COMMIT"), ("sans-serif", 16))
                .margin(14)
                .x_label_area_size(44)
                .y_label_area_size(64)
                .build_cartesian_2d(
                    (f64::from(fewest) * 0.8..f64::from(most) * 1.25).log_scale(),
                    0.0..top * 1.1,
                )
                .map_err(|error| plot_error(&error))?;
            chart
                .configure_mesh()
                .x_desc("concurrent clients")
                .y_desc("increments per second")
                .x_label_formatter(&|clients| format!("{clients:.0}"))
                .y_label_formatter(&|rate| format!("{rate:.0}"))
                .draw()
                .map_err(|error| plot_error(&error))?;
            for (index, label) in labels.iter().enumerate() {
                let mut points: Vec<(f64, f64)> = self
                    .results
                    .iter()
                    .filter(|result| result.hold_ms == hold_ms && result.label == *label)
                    .map(|result| (f64::from(result.clients), result.increments_per_second))
                    .collect();
                if points.is_empty() {
                    continue;
                }
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                let color = Palette99::pick(index).to_rgba();
                chart
                    .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))
                    .map_err(|error| plot_error(&error))?
                    .label(label.to_string())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
                chart
                    .draw_series(points.into_iter().map(|point| Circle::new(point, 3, color.filled())))
                    .map_err(|error| plot_error(&error))?;
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .draw()
                .map_err(|error| plot_error(&error))?;
        }
        root.present().map_err(|error| plot_error(&error))
    }
}
