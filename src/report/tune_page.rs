//! The page of a tuning search (`tune.md`, `tune.html`, `plots/tune-FAMILY.png`): per family
//! the best configurations with their weak/s and intervals, the final race ([`tune_race`]),
//! and the weak rate of every
//! configuration tried against each knob's value (one panel per knob; the winner red, the
//! baseline blue, the rest grey; bars are the 99 % intervals). Rendered from the search
//! records alone, so a committed tuned folder re-renders the same.

use super::plot::{register_font, FAMILY as FONT_FAMILY};
use super::tune_race;
use crate::text::{html as esc, md_code};
use crate::tune::SearchRecord;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The Markdown page's file name.
pub const MARKDOWN_FILE: &str = "tune.md";
/// The HTML page's file name.
pub const HTML_FILE: &str = "tune.html";
/// How many of the best configurations each family lists.
const TOP: usize = 5;
const PANEL_W: u32 = 300;
const PANEL_H: u32 = 190;
const COLUMNS: usize = 3;

/// The search records (`*.search.json`) of a tuned folder, by file name; none when the folder
/// holds none. A record that does not read is an error naming its file.
pub fn read_dir(dir: &Path) -> Result<Vec<SearchRecord>, String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(crate::tune::record::SUFFIX))
        })
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))
        })
        .collect()
}

/// Writes the pages and each family's PNG into `out`; the HTML page's path.
pub fn write(records: &[SearchRecord], out: &Path) -> Result<PathBuf, String> {
    let plots = out.join(super::PLOTS_DIR);
    std::fs::create_dir_all(&plots).map_err(|e| format!("{}: {e}", plots.display()))?;
    for r in records {
        let path = plots.join(format!("tune-{}.png", r.family));
        png(r, &path)?;
    }
    let md = out.join(MARKDOWN_FILE);
    std::fs::write(&md, markdown(records)).map_err(|e| format!("{}: {e}", md.display()))?;
    let page = out.join(HTML_FILE);
    std::fs::write(&page, html(records)?).map_err(|e| format!("{}: {e}", page.display()))?;
    Ok(page)
}

/// The Markdown page: per family its provenance line and table of the best configurations.
pub fn markdown(records: &[SearchRecord]) -> String {
    let mut s = String::from("# Tuning search\n");
    for r in records {
        let _ = write!(s, "\n## {}\n\n{}\n\n", r.family, summary(r));
        s.push_str("| rank | configuration (differences from the baseline) | weak/s | 99 % interval | chunks | phase |\n|---|---|---|---|---|---|\n");
        for (rank, i) in r.ranked().into_iter().take(TOP).enumerate() {
            let t = &r.search.trials[i];
            let win = if i == r.search.best {
                " **(winner)**"
            } else {
                ""
            };
            let _ = writeln!(
                s,
                "| {} | {}{win} | {:.3e} | {} | {} | {:?} |",
                rank + 1,
                md_code(&r.describe(i)),
                t.estimate.rate,
                interval(t.estimate.low, t.estimate.high),
                t.samples.len(),
                t.phase
            );
        }
        if let Some(caption) = tune_race::caption(r) {
            let _ = write!(s, "\n{caption}\n\n| {} |\n", tune_race::HEADER.join(" | "));
            s.push_str("|---|---|---|---|---|\n");
            for [config, rest @ ..] in tune_race::rows(r) {
                let _ = writeln!(s, "| {} | {} |", md_code(&config), rest.join(" | "));
            }
        }
        let _ = writeln!(
            s,
            "\n![weak/s against each knob](plots/tune-{}.png)",
            r.family
        );
    }
    s
}

/// The self-contained HTML page: the same tables, the plots inline as SVG.
pub fn html(records: &[SearchRecord]) -> Result<String, String> {
    let mut s = String::from(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Tuning search</title>\
         <style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}\
         td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}</style></head><body>\n\
         <h1>Tuning search</h1>\n",
    );
    for r in records {
        let _ = write!(
            s,
            "<h2>{}</h2>\n<p>{}</p>\n<table><tr><th>rank</th><th>configuration (differences \
             from the baseline)</th><th>weak/s</th><th>99 % interval</th><th>chunks</th>\
             <th>phase</th></tr>\n",
            esc(&r.family),
            esc(&summary(r))
        );
        for (rank, i) in r.ranked().into_iter().take(TOP).enumerate() {
            let t = &r.search.trials[i];
            let win = if i == r.search.best {
                " <b>(winner)</b>"
            } else {
                ""
            };
            let _ = writeln!(
                s,
                "<tr><td>{}</td><td>{}{win}</td><td>{:.3e}</td><td>{}</td><td>{}</td><td>{:?}</td></tr>",
                rank + 1,
                esc(&r.describe(i)),
                t.estimate.rate,
                interval(t.estimate.low, t.estimate.high),
                t.samples.len(),
                t.phase
            );
        }
        s.push_str("</table>\n");
        if let Some(caption) = tune_race::caption(r) {
            let _ = write!(s, "<p>{}</p>\n<table><tr>", esc(&caption));
            for head in tune_race::HEADER {
                let _ = write!(s, "<th>{}</th>", esc(head));
            }
            s.push_str("</tr>\n");
            for row in tune_race::rows(r) {
                let cells: String = row.iter().map(|c| format!("<td>{}</td>", esc(c))).collect();
                let _ = writeln!(s, "<tr>{cells}</tr>");
            }
            s.push_str("</table>\n");
        }
        s.push_str(&svg(r)?);
    }
    s.push_str("</body></html>\n");
    Ok(s)
}

fn summary(r: &SearchRecord) -> String {
    let machine = r
        .provenance
        .get("gpu")
        .or_else(|| r.provenance.get("cpu"))
        .cloned()
        .unwrap_or_default();
    let stopped = r.search.trials.iter().filter(|t| t.stopped_early).count();
    let failed = r
        .search
        .trials
        .iter()
        .filter(|t| t.failed.is_some())
        .count();
    format!(
        "{} backend ({machine}), tests {}, seed {}, budget {} s: {} configurations, {stopped} \
         stopped early{}{}",
        r.backend,
        r.tests.join(" "),
        r.seed,
        r.budget_s,
        r.search.trials.len(),
        match failed {
            0 => String::new(),
            n => format!(", {n} failed to run (their reasons are in the search record)"),
        },
        if r.search.cut_short {
            ", cut short by the budget"
        } else {
            ""
        }
    )
}

fn interval(low: f64, high: f64) -> String {
    if high >= f64::MAX {
        format!("{low:.3e} to unbounded")
    } else {
        format!("{low:.3e} to {high:.3e}")
    }
}

fn size(r: &SearchRecord) -> (u32, u32) {
    let rows = r.params.len().div_ceil(COLUMNS).max(1) as u32;
    (PANEL_W * COLUMNS as u32, PANEL_H * rows)
}

/// The knob panels of a family as a standalone SVG document.
pub fn svg(r: &SearchRecord) -> Result<String, String> {
    register_font();
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size(r)).into_drawing_area();
        draw(&root, r).map_err(|e| format!("plot of {}: {e}", r.family))?;
        root.present()
            .map_err(|e| format!("plot of {}: {e}", r.family))?;
    }
    Ok(out)
}

/// The knob panels of a family as a PNG file.
pub fn png(r: &SearchRecord, path: &Path) -> Result<(), String> {
    register_font();
    let root = BitMapBackend::new(path, size(r)).into_drawing_area();
    draw(&root, r).map_err(|e| format!("{}: {e}", path.display()))?;
    root.present()
        .map_err(|e| format!("{}: {e}", path.display()))
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    r: &SearchRecord,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let rows = r.params.len().div_ceil(COLUMNS).max(1);
    let panels = root.split_evenly((rows, COLUMNS));
    let measured: Vec<usize> = (0..r.search.trials.len())
        .filter(|&i| !r.search.trials[i].samples.is_empty() && r.search.trials[i].failed.is_none())
        .collect();
    let top = measured
        .iter()
        .map(|&i| r.search.trials[i].estimate.rate)
        .fold(0.0, f64::max)
        .max(1.0)
        * 1.5;
    for (k, area) in panels.iter().enumerate().take(r.params.len()) {
        panel(area, r, k, &measured, top)?;
    }
    Ok(())
}

/// One knob's panel: each measured configuration at its value of the knob.
fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    r: &SearchRecord,
    k: usize,
    measured: &[usize],
    top: f64,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let p = &r.params[k];
    let n = p.values.len();
    let mut chart = ChartBuilder::on(area)
        .caption(&p.name, (FONT_FAMILY, 13))
        .margin(6)
        .x_label_area_size(22)
        .y_label_area_size(48)
        .build_cartesian_2d(-0.5f64..n as f64 - 0.5, 0.0f64..top)?;
    let labels = p.values.clone();
    let x_fmt = |v: &f64| {
        let i = v.round();
        if (v - i).abs() < 1e-6 && i >= 0.0 {
            labels.get(i as usize).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n + 1)
        .x_label_formatter(&x_fmt)
        .y_labels(4)
        .y_label_formatter(&|v| format!("{v:.1e}"))
        .label_style((FONT_FAMILY, 10))
        .draw()?;
    for &i in measured {
        let t = &r.search.trials[i];
        let Some(&v) = t.point.0.get(k) else { continue };
        // Spread the configurations of one value a little, in trial order, so they stay apart.
        let x = v as f64 + ((i % 7) as f64 - 3.0) * 0.05;
        let (colour, size) = if i == r.search.best {
            (RGBColor(0xd0, 0x21, 0x2b), 4)
        } else if i == 0 {
            (RGBColor(0x3b, 0x6e, 0xc4), 4)
        } else {
            (RGBColor(0x88, 0x88, 0x88), 2)
        };
        let high = t.estimate.high.min(top);
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(x, t.estimate.low), (x, high)],
            colour.mix(0.5),
        )))?;
        chart.draw_series(std::iter::once(Circle::new(
            (x, t.estimate.rate),
            size,
            colour.filled(),
        )))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::{search, Evaluator, Plan, Point, Refusal, Sample, Space};

    /// Weak/s grows with the `sync` index: a winner that is not the baseline.
    struct BySync;

    impl Evaluator for BySync {
        fn sample(&mut self, p: &Point, seed: u64) -> Result<Sample, Refusal> {
            Ok(Sample {
                instances: 1000,
                weak: 100 * (1 + p.0[0] as u64 * p.0[0] as u64) + seed % 7,
                seconds: 1.0,
                link_ns: None,
            })
        }
        fn time_left(&self) -> bool {
            true
        }
    }

    fn record() -> SearchRecord {
        let space = Space::cpu();
        let plan = Plan {
            seed: 1,
            random: 5,
            local: 3,
            parents: 2,
            min_chunks: 2,
            max_chunks: 3,
            finalists: 3,
            final_rounds: 10,
        };
        SearchRecord {
            family: "SB".into(),
            backend: "cpu".into(),
            seed: 1,
            budget_s: 10.0,
            tests: vec!["SB".into()],
            provenance: [("cpu".to_string(), "Test CPU".to_string())].into(),
            params: SearchRecord::params_of(&space),
            baseline: space.baseline.0.clone(),
            search: search(&space, &plan, &mut BySync).unwrap(),
        }
    }

    #[test]
    fn the_pages_list_the_winner_first_and_plot_every_knob() {
        let r = record();
        assert_ne!(r.search.best, 0);
        let md = markdown(std::slice::from_ref(&r));
        let first = md.lines().find(|l| l.starts_with("| 1 |")).unwrap();
        assert!(first.contains("(winner)"), "{md}");
        assert!(first.contains(&r.describe(r.search.best)), "{md}");
        assert!(
            md.contains("cpu backend (Test CPU), tests SB, seed 1"),
            "{md}"
        );
        // The final race: the baseline's row first, its ratio to itself 1 in every round, and
        // the winner's row says so.
        assert!(md.contains("\nFinal race: "), "{md}");
        let race: Vec<&str> = md
            .lines()
            .skip_while(|l| !l.starts_with("Final race: "))
            .filter(|l| l.starts_with("| `"))
            .collect();
        assert!(race[0].contains("| 1.00 (1.00 to 1.00) |"), "{md}");
        let winner = race.iter().find(|l| l.ends_with("| winner |")).unwrap();
        assert!(winner.contains(&r.describe(r.search.best)), "{md}");
        let page = html(std::slice::from_ref(&r)).unwrap();
        assert!(page.contains("<td>winner</td>"), "{page}");
        assert_eq!(page.matches("<svg").count(), 1);
        for knob in ["sync", "batch", "pack"] {
            // Each panel's caption is an SVG text element.
            assert!(page.contains(&format!("\n{knob}\n</text>")), "{knob}");
        }
    }

    #[test]
    fn a_tuned_folder_reads_back_and_renders_into_files() {
        let dir = std::env::temp_dir().join(format!("tune-page-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let r = record();
        let json = serde_json::to_string(&r).unwrap();
        std::fs::write(dir.join("SB.search.json"), json).unwrap();
        std::fs::write(dir.join("SB.stress"), "cpu.sync = 64\n").unwrap();
        let back = read_dir(&dir).unwrap();
        assert_eq!(back.len(), 1);
        assert_eq!(
            (&back[0].family, back[0].search.best),
            (&r.family, r.search.best)
        );
        let points = |x: &SearchRecord| -> Vec<Point> {
            x.search.trials.iter().map(|t| t.point.clone()).collect()
        };
        assert_eq!(points(&back[0]), points(&r));
        let page = write(&[r], &dir).unwrap();
        assert!(page.is_file() && dir.join("plots/tune-SB.png").is_file());
        assert!(dir.join(MARKDOWN_FILE).is_file());
        std::fs::write(dir.join("bad.search.json"), "{").unwrap();
        assert!(read_dir(&dir).unwrap_err().contains("bad.search.json"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
