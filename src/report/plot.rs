//! Per-test histograms: one horizontal bar per outcome on a log-scale count axis, coloured by
//! classification (SC, weak, forbidden, unexpected); allowed outcomes never seen are listed
//! with the 95 % upper bound on their rate instead of a bar. Drawn with plotters and the
//! bundled DejaVu Sans, as SVG (embedded in the HTML report) and PNG (beside it).

use crate::results::TestRecord;
use crate::verdict::Class;
use plotters::coord::ranged1d::SegmentedCoord;
use plotters::coord::types::RangedCoordi32;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;
use std::sync::Once;

/// The font plotters measures and rasterises text with, bundled so that plots look the same
/// everywhere (see `assets/DejaVuSans-LICENSE.txt`).
static FONT: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");
/// The font family every plot draws text in.
pub const FAMILY: &str = "sans-serif";
const WIDTH: u32 = 760;
const ROW: u32 = 24;

/// The colour of a class, shared with the HTML legend.
pub fn colour(class: Class) -> RGBColor {
    match class {
        Class::Sc => RGBColor(0x3b, 0x6e, 0xc4),
        Class::Weak => RGBColor(0xe8, 0x8a, 0x1a),
        Class::Forbidden => RGBColor(0xd0, 0x21, 0x2b),
        Class::Unexpected => RGBColor(0x8e, 0x44, 0xad),
    }
}

/// The same colour as a CSS hex string.
pub fn css_colour(class: Class) -> String {
    let RGBColor(r, g, b) = colour(class);
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// One bar of the plot.
struct Bar {
    label: String,
    class: Class,
    count: u64,
    /// How many unseen outcomes a zero-count row stands for.
    unseen: usize,
}

/// Unseen allowed outcomes beyond this many share one row, so large tests stay readable.
const MAX_UNSEEN_ROWS: usize = 6;

/// Whether the outcomes the condition asks about are all forbidden (no allowed outcome
/// satisfies its proposition; not for `forall`) and none was seen: the record lists no such
/// outcome, so the plot adds a row for them, with the bound on their rate.
fn forbidden_condition_unseen(t: &TestRecord) -> bool {
    let v = &t.verdict;
    v.quantifier != crate::litmus::ast::Quantifier::Forall
        && !v
            .outcomes
            .iter()
            .any(|o| o.satisfies && (o.count > 0 || matches!(o.class, Class::Sc | Class::Weak)))
}

fn bars(t: &TestRecord) -> Vec<Bar> {
    let label = |values: &[i64]| {
        t.observables
            .iter()
            .zip(values)
            .map(|(n, v)| format!("{n}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let unseen = t.verdict.unseen_allowed().count();
    let collapse = unseen > MAX_UNSEEN_ROWS;
    let mut out: Vec<Bar> = t
        .verdict
        .outcomes
        .iter()
        .filter(|o| !(collapse && o.count == 0 && matches!(o.class, Class::Sc | Class::Weak)))
        .map(|o| Bar {
            label: label(&o.values.0),
            class: o.class,
            count: o.count,
            unseen: 1,
        })
        .collect();
    if collapse {
        let weak = t
            .verdict
            .unseen_allowed()
            .filter(|o| o.class == Class::Weak)
            .count();
        out.push(Bar {
            label: format!("{unseen} allowed outcomes ({weak} weak)"),
            class: if weak > 0 { Class::Weak } else { Class::Sc },
            count: 0,
            unseen,
        });
    }
    if forbidden_condition_unseen(t) {
        out.push(Bar {
            label: format!("forbidden: {}", t.condition),
            class: Class::Forbidden,
            count: 0,
            unseen: 1,
        });
    }
    // Readers have checked these counts; saturating keeps a record built in memory from
    // wrapping into a different plot all the same.
    let bucket = t.verdict.outside_the_space();
    if bucket > 0 {
        out.push(Bar {
            label: "values outside the outcome space".into(),
            class: Class::Unexpected,
            count: bucket,
            unseen: 0,
        });
    }
    out
}

/// Registers the bundled font once per process.
pub fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The bundled file is a valid TrueType font; a failure here is a broken build.
        if register_font_bytes().is_err() {
            panic!("the bundled font assets/DejaVuSans.ttf is not a valid font");
        }
    });
}

fn register_font_bytes() -> Result<(), ()> {
    plotters::style::register_font(FAMILY, FontStyle::Normal, FONT).map_err(|_| ())
}

/// The plot's size in pixels for a test.
fn size(t: &TestRecord) -> (u32, u32) {
    (WIDTH, 82 + ROW * bars(t).len().max(1) as u32)
}

/// The histogram of a test as a standalone SVG document.
pub fn svg(t: &TestRecord) -> Result<String, String> {
    register_font();
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size(t)).into_drawing_area();
        draw(&root, t).map_err(|e| format!("plot of {}: {e}", t.name))?;
        root.present()
            .map_err(|e| format!("plot of {}: {e}", t.name))?;
    }
    Ok(out)
}

/// The histogram of a test as a PNG file at `path`.
pub fn png(t: &TestRecord, path: &Path) -> Result<(), String> {
    register_font();
    let root = BitMapBackend::new(path, size(t)).into_drawing_area();
    draw(&root, t).map_err(|e| format!("{}: {e}", path.display()))?;
    root.present()
        .map_err(|e| format!("{}: {e}", path.display()))
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    t: &TestRecord,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let bars = bars(t);
    let n = bars.len().max(1) as i32;
    let max = bars.iter().map(|b| b.count).max().unwrap_or(0).max(1) as f64;
    let label_w = label_width(&bars);
    let title = format!(
        "{} — {} ({} instances)",
        t.name,
        t.verdict.status.as_str(),
        super::format::count(t.verdict.instances)
    );
    let mut chart = ChartBuilder::on(root)
        .caption(title, (FAMILY, 15))
        .margin(8)
        .x_label_area_size(40)
        .y_label_area_size(label_w)
        // The axis runs past the longest bar far enough for its label ("17,856 forbidden", about
        // 100 px) to be drawn whole.
        .build_cartesian_2d((0.5f64..max * 40.0).log_scale(), (0..n).into_segmented())?;
    let labels: Vec<String> = bars.iter().map(|b| b.label.clone()).collect();
    // Row 0 is drawn at the top: bar i sits at segment n - 1 - i.
    let row = |i: usize| n - 1 - i as i32;
    let y_fmt = |v: &SegmentValue<i32>| match v {
        SegmentValue::CenterOf(r) => labels
            .get((n - 1 - *r) as usize)
            .cloned()
            .unwrap_or_default(),
        _ => String::new(),
    };
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(n as usize)
        .y_label_formatter(&y_fmt)
        .x_label_formatter(&log_tick)
        .x_desc("instances (log scale)")
        .label_style((FAMILY, 12))
        .axis_desc_style((FAMILY, 12))
        .draw()?;
    for (i, b) in bars.iter().enumerate() {
        draw_bar(&mut chart, b, row(i), t)?;
    }
    Ok(())
}

/// The chart a plot draws its bars on: counts on a log scale across, one segment per outcome.
type Chart<'a, DB> =
    ChartContext<'a, DB, Cartesian2d<LogCoord<f64>, SegmentedCoord<RangedCoordi32>>>;

/// Bar `b` in row `i`: a bar labelled with its count and class, or, for an outcome never seen,
/// the note saying how rare it can still be.
fn draw_bar<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    b: &Bar,
    i: i32,
    t: &TestRecord,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let c = colour(b.class);
    if b.count == 0 {
        chart.draw_series(std::iter::once(Text::new(
            unseen_note(b, t),
            (0.6, SegmentValue::CenterOf(i)),
            (FAMILY, 11).into_font().color(&c),
        )))?;
        return Ok(());
    }
    let mut r = Rectangle::new(
        [
            (0.5, SegmentValue::Exact(i)),
            (b.count as f64, SegmentValue::Exact(i + 1)),
        ],
        c.filled(),
    );
    r.set_margin(4, 4, 0, 0);
    chart.draw_series(std::iter::once(r))?;
    chart.draw_series(std::iter::once(Text::new(
        format!("{} {}", super::format::count(b.count), b.class.as_str()),
        (b.count as f64 * 1.15, SegmentValue::CenterOf(i)),
        (FAMILY, 11).into_font().color(&BLACK.mix(0.8)),
    )))?;
    Ok(())
}

/// Pixels for the outcome labels left of the bars: 7 per character of the longest (8 to 48).
fn label_width(bars: &[Bar]) -> u32 {
    let longest = bars.iter().map(|b| b.label.chars().count()).max();
    longest.unwrap_or(8).clamp(8, 48) as u32 * 7 + 10
}

/// A tick of the log-scaled instance axis: none below 1, plain up to 10^4, then as 1e5.
fn log_tick(v: &f64) -> String {
    if *v < 1.0 {
        String::new()
    } else if *v < 1e4 {
        format!("{v:.0}")
    } else {
        format!("{v:.0e}")
    }
}

/// What stands in for the bar of an outcome never seen: for a forbidden one, how rare it must
/// be given the instances run; for an allowed one (or a row of several), the same bound.
fn unseen_note(b: &Bar, t: &TestRecord) -> String {
    if b.class == Class::Forbidden {
        let n = t.verdict.instances;
        return match crate::verdict::unseen_upper_bound_95(n) {
            Some(p) => format!(
                "0 in {}: rate < {} (95 %)",
                super::format::count(n),
                super::format::rate(Some(p))
            ),
            None => "no instances".to_string(),
        };
    }
    let what = if b.unseen > 1 {
        "none seen: each".to_string()
    } else {
        format!("{} allowed, not seen:", b.class.as_str())
    };
    match t.rates.unseen_upper_bound_95 {
        Some(p) => format!("{what} rate < {} (95 %)", super::format::rate(Some(p))),
        None => format!("{what} no instances"),
    }
}
