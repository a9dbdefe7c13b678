//! `ptx-litmus model-diff`: the built-in checker against a cat model on seeded random tests,
//! with agreements and disagreements by class; each side of each test bounded by `--timeout`
//! and Ctrl-C.

use super::bar::Bar;
use super::{bounded_check, interrupt, AppError, Exit};
use crate::cat::builtin::{choose, Chosen};
use crate::cat::differential::{compare_with, random_test, Comparison, Seconds, Summary};
use crate::cli::ModelDiffArgs;
use crate::gen::random::{test_name, Stream};
use crate::litmus::{self, ast::Test};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Runs the comparison and prints the summary; exit 1 when some test disagrees, 2 when a test
/// under the paths does not parse, 3 when stopped early by a signal (the summary covers the
/// tests compared).
pub fn run(args: &ModelDiffArgs) -> Result<Exit, AppError> {
    let model = choose(&args.model)?;
    let limit = bounded_check::timeout(args.timeout)?;
    interrupt::install();
    let start = Instant::now();
    if let Some(dir) = &args.save {
        std::fs::create_dir_all(dir).map_err(|e| format!("--save {}: {e}", dir.display()))?;
    }
    let ((tests, count), what, unparsed) = if args.paths.is_empty() {
        random_tests(args)
    } else {
        path_tests(&args.paths)?
    };
    let mut s = Summary::default();
    let mut saved = 0;
    let bar = Bar::new(count, "tests").live(bounded_check::progress);
    let work = |(name, text, test): Named| {
        bar.working_on(&name);
        let (compared, secs) = compare(&model, &test, limit);
        (name, text, compared, secs)
    };
    super::ordered::in_order(
        tests,
        usize::from(args.jobs),
        work,
        |(name, text, c, secs)| {
            if !matches!(&c, Ok(c) if c.agrees()) {
                saved += save(args.save.as_deref(), &name, &text)?;
            }
            s.add(&name, &text, c, secs);
            bar.done();
            Ok(())
        },
    )?;
    drop(bar);
    println!(
        "built-in checker vs {} ({}), {what}, in {:.1} s",
        model.name,
        model.model.title,
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
    } else if unparsed > 0 {
        Exit::Error
    } else if s.agree == s.tests {
        Exit::Success
    } else {
        Exit::Finding
    })
}

/// A test to compare: its name, its text and the parsed test.
type Named = (String, String, Test);

/// The tests to compare, made as they are needed, and how many.
type Tests<'a> = (Box<dyn Iterator<Item = Named> + Send + 'a>, u64);

/// The tests of the random stream `args` chooses, and how the summary names them.
fn random_tests(args: &ModelDiffArgs) -> (Tests<'_>, String, usize) {
    let stream = args.stream();
    let range = args.first..args.first.saturating_add(args.tests);
    let count = range.end - range.start;
    let tests = range.map(move |i| {
        let (text, test) = random_test(args.seed, i, stream);
        (test_name(args.seed, i, stream), text, test)
    });
    let kind = match stream {
        Stream::Plain => "",
        Stream::Barriers => " (barrier stream)",
        Stream::Proxies => " (proxy stream)",
    };
    let what = format!("seed {}{kind}, tests {}..", args.seed, args.first);
    ((Box::new(tests), count), what, 0)
}

/// The tests under `paths`, how the summary names them, and how many files did not parse
/// (each reported on stderr).
fn path_tests(paths: &[PathBuf]) -> Result<(Tests<'static>, String, usize), AppError> {
    let mut unparsed = 0;
    let mut tests = Vec::new();
    for (path, parsed) in super::suite::load(paths)? {
        match parsed {
            Ok(test) => tests.push((test.name.clone(), litmus::print(&test), test)),
            Err(e) if e.starts_with(&path.display().to_string()) => {
                unparsed += 1;
                eprintln!("ptx-litmus: {e}");
            }
            Err(e) => {
                unparsed += 1;
                eprintln!("ptx-litmus: {}: {e}", path.display());
            }
        }
    }
    let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let what = format!("{} tests under {}", tests.len(), shown.join(" "));
    let count = tests.len() as u64;
    Ok(((Box::new(tests.into_iter()), count), what, unparsed))
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
