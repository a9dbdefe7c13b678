//! `ptx-litmus report RESULTS_DIR`: renders a result set's HTML and Markdown reports and plots,
//! and prints its text summary.

use super::{AppError, Exit};
use crate::cli::ReportArgs;
use crate::report::{self, summary};
use crate::results;

/// Runs `report`. Rendering is not a finding: it exits 0 whatever the verdicts.
pub fn run(args: &ReportArgs) -> Result<Exit, AppError> {
    if !args.results.join(results::RUN_FILE).exists() {
        // A folder `tune` wrote: its search page.
        let records = report::tune_page::read_dir(&args.results)?;
        if !records.is_empty() {
            let out = args.out.clone().unwrap_or_else(|| args.results.clone());
            let page = report::tune_page::write(&records, &out)?;
            println!("wrote {}", page.display());
            return Ok(Exit::Success);
        }
    }
    let set = results::read_result_set(&args.results)?;
    if args.csv {
        print!("{}", report::csv::render(&set.run, &set.tests));
        return Ok(Exit::Success);
    }
    let out = args.out.clone().unwrap_or_else(|| args.results.clone());
    let written = report::write_report(&set, &out, args.force)?;
    print!("{}", summary::render(&set.run, &set.tests));
    for p in written.iter().take(2) {
        println!("wrote {}", p.display());
    }
    if written.len() > 2 {
        println!(
            "wrote {} plots under {}",
            written.len() - 2,
            out.join(report::PLOTS_DIR).display()
        );
    }
    Ok(Exit::Success)
}
