//! The progress bar of a command that works through a list (tests, tune's families, the
//! kernels `sass` assembles, a SASS matrix's compiler columns, the cubins `toolchains prebuild`
//! writes): on stderr, and drawn only on a terminal, so piped or redirected output stays as it
//! was. One bar is shown at a time; what the command prints while it is shown goes through
//! [`outside`], which lifts the bar off the terminal for the print, so that lines and bar never
//! mix. A bar may also show how far the item at work has got ([`Bar::live`]), for an item that
//! takes long alone. [`style`] draws `run`'s bar too.

use indicatif::{HumanDuration, ProgressBar, ProgressState, ProgressStyle};
use std::fmt::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How far the item at work has got, asked at every redraw: a few words, or `None`.
pub type Live = Arc<dyn Fn() -> Option<String> + Send + Sync>;

/// The bar shown now, for [`outside`].
static SHOWN: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// A bar over a list of items; it clears itself from the terminal when dropped.
pub struct Bar {
    bar: ProgressBar,
    /// What the items are called ("tests").
    unit: String,
}

impl Bar {
    /// A bar over `len` items called `unit` ("tests"): the time since it started, how many are
    /// done, the time left and the item at work.
    pub fn new(len: u64, unit: &str) -> Bar {
        let bar = ProgressBar::new(len);
        bar.set_style(style(unit, None, None));
        if !bar.is_hidden() {
            // Ticks keep the elapsed time moving while one test takes long.
            bar.enable_steady_tick(Duration::from_millis(200));
        }
        *SHOWN.lock().unwrap_or_else(|p| p.into_inner()) = Some(bar.clone());
        Bar {
            bar,
            unit: unit.to_string(),
        }
    }

    /// Names the item at work.
    pub fn working_on(&self, item: &str) {
        self.bar.set_message(item.to_string());
    }

    /// Counts one item done.
    pub fn done(&self) {
        self.bar.inc(1);
    }

    /// A handle that counts items done, for an iterator that skips some.
    pub fn counter(&self) -> ProgressBar {
        self.bar.clone()
    }

    /// Shows, after the item at work, what `progress` says of it at each redraw (say, the
    /// candidates a long check has examined so far).
    pub fn live(self, progress: impl Fn() -> Option<String> + Send + Sync + 'static) -> Bar {
        self.bar
            .set_style(style(&self.unit, None, Some(Arc::new(progress))));
        self
    }
}

/// The bar's look: elapsed time, bar, items done of `counted` (a template piece: "tests", or
/// "tests, {per_sec}" with the rate), time left (from `per_test` seconds per item until one is
/// done, see [`time_left`]), what `live` says of the item at work, and its name.
pub fn style(counted: &str, per_test: Option<f64>, live: Option<Live>) -> ProgressStyle {
    let template = format!(
        "[{{elapsed_precise}}] {{bar:20}} {{pos}}/{{len}} {counted}, ETA {{left}}  {{live}}{{wide_msg}}"
    );
    ProgressStyle::with_template(&template)
        .expect("the template is valid")
        .with_key("left", move |s: &ProgressState, w: &mut dyn Write| {
            let _ = write!(w, "{}", time_left(s, per_test));
        })
        .with_key("live", move |_: &ProgressState, w: &mut dyn Write| {
            if let Some(said) = live.as_ref().and_then(|l| l()) {
                let _ = write!(w, "[{said}] ");
            }
        })
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
        *SHOWN.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

/// Runs `print` with the bar shown, if any, lifted off the terminal.
pub fn outside<R>(print: impl FnOnce() -> R) -> R {
    let shown = SHOWN.lock().unwrap_or_else(|p| p.into_inner()).clone();
    match shown {
        Some(bar) => bar.suspend(print),
        None => print(),
    }
}

/// The time left: from the rate of finished items once one has finished; before that, from
/// `per_test` (`run --time`) × items when the budget is a time, else unknown.
fn time_left(s: &ProgressState, per_test: Option<f64>) -> String {
    let total = s.len().unwrap_or(0) as f64 * per_test.unwrap_or(0.0);
    match (s.pos(), per_test) {
        (0, None) => "?".into(),
        (0, Some(_)) => {
            let left = (total - s.elapsed().as_secs_f64()).max(0.0);
            HumanDuration(std::time::Duration::from_secs_f64(left)).to_string()
        }
        _ => HumanDuration(s.eta()).to_string(),
    }
}
