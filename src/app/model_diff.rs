//! `ptx-litmus model-diff`: the built-in checker against a cat model on seeded random tests,
//! with agreements and disagreements by class; each side of each test bounded by `--timeout`
//! and Ctrl-C.

use super::bar::Bar;
use super::{bounded_check, interrupt, AppError, Exit};
use crate::cat::builtin::{choose, Chosen};
use crate::cat::differential::{compare_with, random_test, Comparison, Seconds, Summary};
use crate::cli::ModelDiffArgs;
use crate::gen::random::{test_name, Stream};
use crate::litmus::ast::Test;
use std::path::Path;
use std::time::{Duration, Instant};

/// Runs the comparison and prints the summary; exit 1 when some test disagrees, 3 when
/// stopped early by a signal (the summary covers the tests compared).
pub fn run(args: &ModelDiffArgs) -> Result<Exit, AppError> {
    let model = choose(&args.model)?;
    let limit = bounded_check::timeout(args.timeout)?;
    interrupt::install();
    let start = Instant::now();
    let mut s = Summary::default();
    if let Some(dir) = &args.save {
        std::fs::create_dir_all(dir).map_err(|e| format!("--save {}: {e}", dir.display()))?;
    }
    let mut saved = 0;
    let bar = Bar::new(args.tests, "tests").live(bounded_check::progress);
    for i in args.first..args.first.saturating_add(args.tests) {
        if interrupt::requested() {
            break;
        }
        let (text, test) = random_test(args.seed, i, args.stream());
        let name = test_name(args.seed, i, args.stream());
        bar.working_on(&name);
        let (compared, secs) = compare(&model, &test, limit);
        if !matches!(&compared, Ok(c) if c.agrees()) {
            saved += save(args.save.as_deref(), &name, &text)?;
        }
        s.add(&name, &text, compared, secs);
        bar.done();
    }
    drop(bar);
    println!(
        "built-in checker vs {} ({}), seed {}{}, tests {}.., in {:.1} s",
        model.name,
        model.model.title,
        args.seed,
        match args.stream() {
            Stream::Plain => "",
            Stream::Barriers => " (barrier stream)",
            Stream::Proxies => " (proxy stream)",
        },
        args.first,
        start.elapsed().as_secs_f64()
    );
    print!("{}", s.report(args.examples));
    if let Some(dir) = &args.save {
        println!(
            "{saved} test(s) that disagree or are undecided written to {}",
            dir.display()
        );
    }
    Ok(if let Some(sig) = interrupt::signal_name() {
        eprintln!("ptx-litmus: {sig}: stopped; the summary covers the tests compared");
        Exit::Partial
    } else if s.agree == s.tests {
        Exit::Success
    } else {
        Exit::Finding
    })
}

/// Both sides on `test`, each bounded by `limit`, and the seconds each took.
fn compare(model: &Chosen, test: &Test, limit: Duration) -> (Result<Comparison, String>, Seconds) {
    compare_with(
        || bounded_check::check(test, limit).map_err(|e| format!("built-in {e}")),
        || bounded_check::check_cat(model, test, limit).map_err(|e| format!("cat {e}")),
    )
}

/// Writes test `name`'s `text` into `dir`, when given, as `<name>.litmus`: how many it wrote.
fn save(dir: Option<&Path>, name: &str, text: &str) -> Result<usize, AppError> {
    let Some(dir) = dir else {
        return Ok(0);
    };
    let file = dir.join(format!("{name}.litmus"));
    std::fs::write(&file, text).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    Ok(1)
}
