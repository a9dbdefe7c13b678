//! Which steps one GPU window runs: in manifest order, each step whose expected time fits
//! what is left of the budget (a step that does not fit leaves the time to later, shorter
//! ones and waits for the next window), as long as another archive can come back. `campaign
//! run` applies the rule to the time really left; `campaign status` to the estimates, window
//! after window, to say how many windows the campaign still needs.

use super::limits::MAX_FILES;
use super::manifest::{Kind, Step};

/// Seconds kept back from a window's budget for packing the last archive and the summary.
pub const RESERVE_S: f64 = 15.0;

/// Reads `540s`, `9m` or `540`.
pub fn budget_seconds(s: &str) -> Result<f64, String> {
    let (num, unit) = match s.strip_suffix('s') {
        Some(n) => (n, 1.0),
        None => match s.strip_suffix('m') {
            Some(n) => (n, 60.0),
            None => (s, 1.0),
        },
    };
    let secs = num
        .trim()
        .parse::<f64>()
        .ok()
        .map(|v| v * unit)
        .filter(|v| v.is_finite() && *v > 0.0 && *v <= 86_400.0)
        .ok_or_else(|| format!("--budget {s}: expected seconds such as 540s, 9m or 540"))?;
    if secs <= RESERVE_S {
        return Err(format!(
            "--budget {s}: leaves no time for a step after the {RESERVE_S:.0} s kept for \
             packing what ran (give more than {RESERVE_S:.0} s)"
        ));
    }
    Ok(secs)
}

/// The seconds `step` needs: its estimate, scaled by the `share` of its tests still to run
/// and, for a `run` step, by the `pace` run steps have shown on this backend (a script step
/// bounds its own time: bench and tune run for set seconds whatever the GPU).
pub fn need(step: &Step, pace: Option<f64>, share: f64) -> f64 {
    let pace = match step.kind {
        Kind::Run(_) => pace.unwrap_or(1.0),
        Kind::Script(_) => 1.0,
    };
    f64::from(step.seconds) * pace * share
}

/// What the window rule knows of a step still to run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Item {
    /// The seconds it needs ([`need`]).
    pub need: f64,
    /// Whether a try cut short resumes where it stopped (a `run` step) rather than
    /// starting again (a script step).
    pub resumable: bool,
}

impl Item {
    /// The item `step` needing `need` seconds is.
    pub fn of(step: &Step, need: f64) -> Item {
        Item {
            need,
            resumable: matches!(step.kind, Kind::Run(_)),
        }
    }
}

/// Whether `item` starts with `left` seconds of a window whose whole budget is `whole`
/// seconds (after the reserve), `fresh` when no step has run in it yet: when it fits, or
/// when it is resumable, longer than any window, and has this one to itself (it is cut at
/// the end and resumed in the next).
pub fn starts(item: Item, left: f64, whole: f64, fresh: bool) -> bool {
    item.need <= left || (item.resumable && item.need > whole && fresh)
}

/// Whether one more archive can come back after `packed` when `max_files` come back (the
/// summary takes a file too).
pub fn file_left(packed: usize, max_files: usize) -> bool {
    packed + 1 < max_files
}

/// The plan of the steps still to run over windows of a given budget.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    /// Each window's steps (indices into the items), in the order they run; a resumable
    /// step longer than a window fills as many windows of its own as it needs.
    pub windows: Vec<Vec<usize>>,
    /// The seconds each window is expected to take.
    pub seconds: Vec<f64>,
    /// Script steps longer than a whole window: they start in none (a larger budget, or a
    /// step split in two, runs them).
    pub never: Vec<usize>,
}

/// Plans `items` over windows of `budget` seconds, each taking in order the steps that
/// [`starts`] lets start, as if each took what it needs.
pub fn plan(items: &[Item], budget: f64) -> Plan {
    let whole = budget - RESERVE_S;
    let (mut todo, never): (Vec<usize>, Vec<usize>) =
        (0..items.len()).partition(|&k| items[k].resumable || items[k].need <= whole);
    let mut rest: Vec<f64> = items.iter().map(|i| i.need).collect();
    let (mut windows, mut seconds) = (Vec::new(), Vec::new());
    while !todo.is_empty() {
        let mut left = whole;
        let mut this = Vec::new();
        for &k in &todo {
            let item = Item {
                need: rest[k],
                ..items[k]
            };
            if file_left(this.len(), MAX_FILES) && starts(item, left, whole, this.is_empty()) {
                let spent = rest[k].min(left);
                rest[k] -= spent;
                left -= spent;
                this.push(k);
            }
        }
        todo.retain(|&k| rest[k] > 0.0);
        windows.push(this);
        seconds.push(whole - left);
    }
    Plan {
        windows,
        seconds,
        never,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_read_in_seconds_or_minutes() {
        assert_eq!(budget_seconds("540s"), Ok(540.0));
        assert_eq!(budget_seconds("9m"), Ok(540.0));
        assert_eq!(budget_seconds("20.5"), Ok(20.5));
        for bad in ["", "0", "-1s", "xs", "inf", "100000", "1441m"] {
            assert!(budget_seconds(bad).is_err(), "{bad}");
        }
        // Nothing could run within the reserve: refused, not a window of negative time.
        for short in ["1s", "15", "0.25m"] {
            let e = budget_seconds(short).unwrap_err();
            assert!(e.contains("kept for packing"), "{e}");
        }
    }

    #[test]
    fn the_pace_scales_run_steps_only() {
        let steps = crate::campaign::manifest::parse(
            "r 100 run litmus\ns 100 script x.sh\n",
            std::path::Path::new("m"),
        )
        .unwrap();
        assert_eq!(need(&steps[0], Some(2.0), 0.5), 100.0);
        assert_eq!(need(&steps[1], Some(2.0), 1.0), 100.0);
        assert_eq!(need(&steps[0], None, 1.0), 100.0);
    }

    fn items(needs: &[f64]) -> Vec<Item> {
        needs
            .iter()
            .map(|&need| Item {
                need,
                resumable: false,
            })
            .collect()
    }

    #[test]
    fn a_step_that_does_not_fit_waits_while_shorter_ones_after_it_run() {
        // 115 s of a 130 s window: the 60 s step fits, the 80 s one does not, the 50 s one
        // after it does.
        let p = plan(&items(&[60.0, 80.0, 50.0, 10.0]), 130.0);
        assert_eq!(p.windows, vec![vec![0, 2], vec![1, 3]]);
        assert!(p.never.is_empty());
    }

    #[test]
    fn a_script_step_longer_than_a_window_is_set_apart_not_planned_forever() {
        let p = plan(&items(&[500.0, 20.0]), 480.0);
        assert_eq!(p.windows, vec![vec![1]]);
        assert_eq!(p.never, vec![0]);
    }

    #[test]
    fn a_run_step_longer_than_a_window_fills_windows_of_its_own_and_resumes() {
        let mut it = items(&[100.0, 1000.0, 100.0]);
        it[1].resumable = true;
        // Windows of 465 s: the two short steps first (the long one waits for a window of its
        // own), then the long one's 465 + 465 + 70 s.
        let p = plan(&it, 480.0);
        assert_eq!(p.windows, vec![vec![0, 2], vec![1], vec![1], vec![1]]);
        assert_eq!(p.seconds, [200.0, 465.0, 465.0, 70.0]);
        let fresh = Item {
            need: 1000.0,
            resumable: true,
        };
        assert!(starts(fresh, 465.0, 465.0, true));
        assert!(!starts(fresh, 465.0, 465.0, false));
        assert!(!starts(
            Item {
                resumable: false,
                ..fresh
            },
            465.0,
            465.0,
            true
        ));
    }

    #[test]
    fn a_window_holds_no_more_archives_than_come_back() {
        let p = plan(&items(&[1.0; 10]), 480.0);
        assert_eq!(p.windows[0].len(), MAX_FILES - 1);
        assert_eq!(p.windows.len(), 2);
    }
}
