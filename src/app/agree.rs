//! `ptx-litmus agree`: the model's verdicts beside a published cuda-litmus results.csv, joined
//! by test name: a table per kernel and every disagreement, for docs/generated.md.

use super::{bounded_check, check::prop_allowed, AppError, Exit};
use crate::cli::AgreeArgs;
use crate::litmus::{self, ast::Test};
use crate::model::ModelVerdict;
use std::collections::BTreeMap;
use std::path::Path;

/// The largest CSV read: the published one is about 100 KiB.
const MAX_CSV_BYTES: u64 = 16 << 20;

/// A verdict on the weak outcome: allowed (`INSTANCE`) or forbidden (`UNSAT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    Allowed,
    Forbidden,
}

/// Per kernel: rows compared, then the disagreements `(name, ours)`.
type Table = BTreeMap<String, (usize, Vec<(String, Verdict)>)>;

/// The chosen column of every row, by test name; errors name the file and line.
fn read_csv(path: &Path, column: &str) -> Result<BTreeMap<String, Verdict>, AppError> {
    let text = crate::input::text_of(path, MAX_CSV_BYTES, "a results.csv")?;
    let mut lines = text.lines().enumerate();
    let header: Vec<&str> = lines
        .next()
        .map(|(_, l)| l.split(',').collect())
        .unwrap_or_default();
    let find = |c: &str| {
        header
            .iter()
            .position(|h| h.trim() == c)
            .ok_or_else(|| format!("{}:1: no column `{c}`", path.display()))
    };
    let (name_col, verdict_col) = (find("test")?, find(column)?);
    let mut rows = BTreeMap::new();
    for (i, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        let at = |what: String| format!("{}:{}: {what}", path.display(), i + 1);
        let (name, v) = match (cells.get(name_col), cells.get(verdict_col)) {
            (Some(n), Some(v)) => (n, v),
            _ => return Err(at(format!("expected {} cells", header.len())).into()),
        };
        let v = match *v {
            "INSTANCE" => Verdict::Allowed,
            "UNSAT" => Verdict::Forbidden,
            other => return Err(at(format!("`{other}`: expected INSTANCE or UNSAT")).into()),
        };
        rows.insert(name.to_string(), v);
    }
    Ok(rows)
}

/// Runs `agree`.
pub fn run(args: &AgreeArgs) -> Result<Exit, AppError> {
    let rows = read_csv(&args.csv, &args.column)?;
    let limit = bounded_check::timeout(args.timeout)?;
    let paths = if args.paths.is_empty() {
        vec![super::suite::root()?.join(litmus::GENERATED_DIR)]
    } else {
        args.paths.clone()
    };
    let mut table = Table::new();
    let mut found = 0usize;
    let mut failed = 0usize;
    for (path, parsed) in super::suite::load(&paths)? {
        let test = match parsed {
            Ok(t) => t,
            Err(e) => {
                eprintln!("ptx-litmus: {e}");
                failed += 1;
                continue;
            }
        };
        let Some(theirs) = rows.get(&test.name) else {
            continue;
        };
        found += 1;
        match bounded_check::check(&test, limit) {
            Ok(v) => tally(&mut table, &test.name, our_verdict(&test, &v), *theirs),
            Err(e) => {
                eprintln!("ptx-litmus: {}: {e}", path.display());
                failed += 1;
            }
        }
    }
    print!("{}", render(&table, &args.column));
    let missing = rows.len() - found;
    println!(
        "\n{found} of {} rows compared, {missing} without a test, {failed} failed",
        rows.len()
    );
    Ok(if failed > 0 {
        Exit::Error
    } else if missing > 0 {
        Exit::Finding
    } else {
        Exit::Success
    })
}

/// The model's verdict on `test` from its check `v`: Allowed when an allowed outcome satisfies
/// the condition's proposition.
fn our_verdict(test: &Test, v: &ModelVerdict) -> Verdict {
    if prop_allowed(test, v) {
        Verdict::Allowed
    } else {
        Verdict::Forbidden
    }
}

/// Counts variant `name` under its kernel (the name before `_TB_`), listed when `ours` is not
/// `theirs`.
fn tally(table: &mut Table, name: &str, ours: Verdict, theirs: Verdict) {
    let kernel = name.split("_TB_").next().unwrap_or(name).to_string();
    let entry = table.entry(kernel).or_default();
    entry.0 += 1;
    if ours != theirs {
        entry.1.push((name.to_string(), ours));
    }
}

fn word(v: Verdict) -> &'static str {
    match v {
        Verdict::Allowed => "Allowed",
        Verdict::Forbidden => "Forbidden",
    }
}

/// The table (Markdown) and the list of disagreements.
fn render(table: &Table, column: &str) -> String {
    let mut s = format!(
        "| kernel | variants | agree | model Allowed, {column} UNSAT | model Forbidden, {column} INSTANCE |\n|---|---:|---:|---:|---:|\n"
    );
    let (mut n, mut agree) = (0, 0);
    for (k, (count, dis)) in table {
        let more = dis.iter().filter(|(_, v)| *v == Verdict::Allowed).count();
        s.push_str(&format!(
            "| {k} | {count} | {} | {more} | {} |\n",
            count - dis.len(),
            dis.len() - more
        ));
        n += count;
        agree += count - dis.len();
    }
    s.push_str(&format!("| all | {n} | {agree} | | |\n"));
    for (_, dis) in table.values() {
        for (name, ours) in dis {
            s.push_str(&format!("\ndisagree: {name}: model {}", word(*ours)));
        }
    }
    s.push('\n');
    s
}
