//! Rendering result sets for people: the plain-text summary `run` prints, HTML and Markdown
//! reports with plots, and comparisons of two result sets. Reads only [`crate::results`] types,
//! so any result set this build can read re-renders, byte for byte.

pub mod compare;
pub mod csv;
pub mod diff;
pub mod differences;
pub mod dispersion;
pub mod format;
pub mod html;
pub mod kernels;
pub mod markdown;
pub mod plot;
pub mod replays;
pub mod shapes;
pub mod stats;
pub mod summary;
pub mod table;
pub mod tune_page;
pub mod tune_race;
pub mod tuned;

use crate::results::{self, record_stems, ResultSet, ResultsError, TestRecord};
use std::path::{Path, PathBuf};

/// The HTML report's file name.
pub const HTML_FILE: &str = "report.html";
/// The Markdown report's file name.
pub const MARKDOWN_FILE: &str = "report.md";
/// The directory of PNG plots.
pub const PLOTS_DIR: &str = "plots";

/// Renders `report.html`, `report.md` and `plots/<test>.png` for `set` into `out`; refuses to
/// overwrite any of them unless `force`. Returns the files written.
pub fn write_report(
    set: &ResultSet,
    out: &Path,
    force: bool,
) -> Result<Vec<PathBuf>, ResultsError> {
    let tests: Vec<&TestRecord> = set.tests.iter().collect();
    let stems = record_stems(&tests);
    let html_path = out.join(HTML_FILE);
    let md_path = out.join(MARKDOWN_FILE);
    let plots = out.join(PLOTS_DIR);
    let pngs: Vec<PathBuf> = stems
        .iter()
        .map(|s| plots.join(format!("{s}.png")))
        .collect();
    if !force {
        for p in [&html_path, &md_path].into_iter().chain(&pngs) {
            if p.exists() {
                return Err(ResultsError::Exists { path: p.clone() });
            }
        }
    }
    let html =
        html::render(set, &stems).map_err(|message| ResultsError::Incompatible { message })?;
    let md = markdown::render(set, &stems);
    results::create_dir(&plots)?;
    for (t, p) in set.tests.iter().zip(&pngs) {
        plot::png(t, p).map_err(|e| ResultsError::Io {
            path: p.clone(),
            source: std::io::Error::other(e),
        })?;
    }
    results::write_text(&html_path, &html)?;
    results::write_text(&md_path, &md)?;
    let mut written = vec![html_path, md_path];
    written.extend(pngs);
    Ok(written)
}
