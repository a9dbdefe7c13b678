//! Bounded mutation fuzzing of every reader of outside data: the litmus parser, cat models
//! (`--model FILE.cat`), result-set records and the `run.json` a replay reads. Inputs are
//! seeded from `litmus/`, the built-in cat models and a real result set written by the
//! library, and mutated by a seeded generator, so a failure replays exactly.
//!
//! Properties: no panic; no input takes more than [`SLOW`] (a watchdog aborts the process
//! naming it); no input makes the process hold more than [`MEMORY_CAP`] (a counting allocator
//! aborts likewise); every parse error points inside the text; every accepted test prints
//! and parses back to itself; every model error names a line of its text; every refused
//! record names its file.
//!
//! `PTX_LITMUS_FUZZ_INPUTS=N` sets the number of parser inputs (default 200,000: a few seconds
//! in CI) and `PTX_LITMUS_FUZZ_SEED=S` another sequence; `scripts/fuzz` runs a long campaign.

use ptx_litmus::litmus;
use ptx_litmus::results;
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The most memory the process may hold while fuzzing.
const MEMORY_CAP: usize = 2 << 30;
/// The longest one input may take.
const SLOW: Duration = Duration::from_secs(20);

struct Capped;

static HELD: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator; only counts bytes around it.
unsafe impl GlobalAlloc for Capped {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if HELD.fetch_add(layout.size(), Ordering::Relaxed) + layout.size() > MEMORY_CAP {
            // Forget the count so that the message itself can allocate.
            HELD.store(0, Ordering::Relaxed);
            eprintln!("fuzz: memory cap exceeded on input:\n{}", current());
            std::process::abort();
        }
        // SAFETY: the caller's layout is passed through unchanged.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        HELD.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` came from `alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOC: Capped = Capped;

/// The input being tried, for the watchdog's and the allocator's messages.
static CURRENT: Mutex<String> = Mutex::new(String::new());
/// Bumped before each input; the watchdog aborts when it stops moving for [`SLOW`].
static TICK: AtomicU64 = AtomicU64::new(0);

fn current() -> String {
    CURRENT
        .try_lock()
        .map(|s| s.chars().take(2000).collect())
        .unwrap_or_default()
}

fn trying(input: &str) {
    if let Ok(mut c) = CURRENT.lock() {
        c.clear();
        c.push_str(input);
    }
    TICK.fetch_add(1, Ordering::Relaxed);
}

fn watchdog() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        std::thread::spawn(|| {
            let mut last = (TICK.load(Ordering::Relaxed), Instant::now());
            loop {
                std::thread::sleep(Duration::from_millis(200));
                let t = TICK.load(Ordering::Relaxed);
                if t != last.0 {
                    last = (t, Instant::now());
                } else if last.1.elapsed() > SLOW {
                    eprintln!("fuzz: one input took over {SLOW:?}:\n{}", current());
                    std::process::abort();
                }
            }
        });
    });
}

/// A seeded generator (PCG-style LCG output), so every run tries the same inputs.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

/// Fragments that have broken lexers and parsers: sigils, nesting, wide numbers, separators.
const DICTIONARY: [&str; 24] = [
    "%",
    "$",
    "(",
    ")",
    "~",
    "/\\",
    "\\/",
    "|",
    ";",
    "\"",
    "(*",
    "*)",
    "//",
    "{",
    "}",
    "@",
    "-",
    "4294967296",
    "99999999999999999999",
    "0x",
    "::",
    "P9:",
    "\u{0}",
    "é",
];

/// One mutation of `text`: a deleted, inserted, replaced, duplicated or spliced-in range.
fn mutate(text: &str, other: &str, rng: &mut Rng) -> String {
    let chars: Vec<char> = text.chars().collect();
    let at = rng.below(chars.len() + 1);
    let len = 1 + rng.below(12);
    let end = (at + len).min(chars.len());
    let (head, tail): (String, String) =
        (chars[..at].iter().collect(), chars[end..].iter().collect());
    let mid: String = chars[at..end].iter().collect();
    match rng.below(6) {
        0 => format!("{head}{tail}"),
        1 => format!(
            "{head}{}{mid}{tail}",
            DICTIONARY[rng.below(DICTIONARY.len())]
        ),
        2 => format!("{head}{}{tail}", DICTIONARY[rng.below(DICTIONARY.len())]),
        3 => format!("{head}{mid}{mid}{tail}"),
        4 => {
            let o: Vec<char> = other.chars().collect();
            let from = rng.below(o.len());
            let piece: String = o[from..(from + 1 + rng.below(40)).min(o.len())]
                .iter()
                .collect();
            format!("{head}{piece}{tail}")
        }
        _ => {
            let n = 1 + rng.below(3000);
            let open = DICTIONARY[2 + rng.below(2)].repeat(n);
            format!("{head}{open}{tail}")
        }
    }
}

/// The generator's seed: `PTX_LITMUS_FUZZ_SEED`, else a fixed one (so CI tries the same
/// inputs every time and a failure replays).
fn seed(fixed: u64) -> u64 {
    std::env::var("PTX_LITMUS_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(fixed)
}

fn inputs() -> usize {
    std::env::var("PTX_LITMUS_FUZZ_INPUTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200_000)
}

fn inside(text: &str, line: usize, column: usize) -> bool {
    let lines: Vec<&str> = text.split('\n').collect();
    line >= 1 && line <= lines.len() && column >= 1 && column <= lines[line - 1].chars().count() + 1
}

#[test]
fn the_parser_survives_mutants_of_every_project_test() {
    watchdog();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("litmus");
    let files = litmus::discover(&[root]).unwrap();
    let seeds: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect();
    let mut rng = Rng(seed(0x5eed_0f11));
    let (mut accepted, mut refused) = (0u64, 0u64);
    let started = Instant::now();
    for i in 0..inputs() {
        let mut text = seeds[i % seeds.len()].clone();
        for _ in 0..1 + rng.below(4) {
            let other = &seeds[rng.below(seeds.len())];
            text = mutate(&text, other, &mut rng);
        }
        trying(&text);
        let path = Path::new("mutant.litmus");
        match litmus::parse(&text, path) {
            Ok(t) => {
                accepted += 1;
                let printed = litmus::print(&t);
                let again = litmus::parse(&printed, path)
                    .unwrap_or_else(|e| panic!("printed form does not parse: {e}\n{printed}"));
                assert_eq!(again, t, "parse(print(t)) != t for:\n{text}");
            }
            Err(e) => {
                refused += 1;
                let positioned = e.line > 0 || matches!(e.cause, litmus::Cause::Io(_));
                assert!(
                    positioned && (e.line == 0 || inside(&text, e.line, e.column)),
                    "{e}\n{text}"
                );
            }
        }
    }
    eprintln!(
        "fuzz: {} parser inputs in {:.1} s: {accepted} accepted (each round-tripped), \
         {refused} refused with a position",
        accepted + refused,
        started.elapsed().as_secs_f64()
    );
    assert!(
        refused > 0 && accepted > 0,
        "the mutator explores both sides"
    );
}

/// A real result set, written by the library from a CPU run of two project tests.
fn real_set(dir: &Path) -> std::path::PathBuf {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ptx-litmus"))
        .args([
            "run",
            "--backend",
            "cpu",
            "--quiet",
            "--iterations",
            "500",
            "--seed",
            "1",
        ])
        .args([
            "--out",
            dir.to_str().unwrap(),
            "--run-id",
            "seed",
            "--force",
        ])
        .args([
            "litmus/mp/MP+rel.gpu+acq.gpu.litmus",
            "litmus/sb/SB+rlx.gpu+rlx.gpu.litmus",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let machine = std::fs::read_dir(dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    machine.join("seed")
}

#[test]
fn result_set_and_replay_readers_survive_mutated_records() {
    watchdog();
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-results");
    let _ = std::fs::remove_dir_all(&scratch);
    let set = real_set(&scratch);
    let mut files: Vec<std::path::PathBuf> = vec![set.join(results::RUN_FILE)];
    for e in std::fs::read_dir(set.join(results::TESTS_DIR)).unwrap() {
        files.push(e.unwrap().path());
    }
    let originals: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect();
    results::read_result_set(&set).expect("the unmutated set reads");
    let mut rng = Rng(seed(0xdead_beef));
    let (mut read, mut refused) = (0u64, 0u64);
    for _ in 0..inputs() / 20 {
        let k = rng.below(files.len());
        let mutant = mutate(
            &originals[k],
            &originals[rng.below(originals.len())],
            &mut rng,
        );
        trying(&mutant);
        std::fs::write(&files[k], &mutant).unwrap();
        match results::read_result_set(&set) {
            Ok(_) => read += 1,
            Err(e) => {
                refused += 1;
                let msg = e.to_string();
                assert!(
                    msg.contains(&*set.to_string_lossy()) || msg.contains("test "),
                    "{msg}"
                );
            }
        }
        // The replay reader: the same run.json as `run --replay` reads it.
        if k == 0 {
            let _ = results::read_record::<results::RunRecord>(&files[0], results::RUN_FORMAT);
        }
        std::fs::write(&files[k], &originals[k]).unwrap();
    }
    eprintln!(
        "fuzz: {} record mutants: {read} read, {refused} refused naming the file",
        read + refused
    );
    assert!(refused > 0);
}

#[test]
fn the_cat_reader_survives_mutants_of_the_built_in_models() {
    use ptx_litmus::cat;
    watchdog();
    let seeds = [cat::builtin::PTX_7_5, cat::builtin::PTX_6_0];
    let sb = "litmus/sb/SB+fence.sc.gpu+fence.sc.gpu-rlx.litmus";
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(sb);
    let test = litmus::parse(&std::fs::read_to_string(&path).unwrap(), &path).unwrap();
    let mut rng = Rng(seed(0xca7_f00d));
    let (mut ran, mut refused) = (0u64, 0u64);
    let started = Instant::now();
    for i in 0..inputs() / 20 {
        let mut text = seeds[i % seeds.len()].to_string();
        for _ in 0..1 + rng.below(4) {
            text = mutate(&text, seeds[rng.below(seeds.len())], &mut rng);
        }
        trying(&text);
        let lines = text.split('\n').count();
        // A model that loads is run on a test; an error either way names a line of the text.
        let line = match cat::load(&text) {
            Ok(model) => match cat::check::check(&model, &test) {
                Ok(_) => {
                    ran += 1;
                    continue;
                }
                Err(cat::check::CheckError::Cat(e)) => e.line,
                Err(e) => panic!("{e}\n{text}"),
            },
            Err(e) => e.line,
        };
        refused += 1;
        assert!(
            (1..=lines).contains(&line),
            "line {line} of {lines}\n{text}"
        );
    }
    eprintln!(
        "fuzz: {} cat models in {:.1} s: {ran} ran on {sb}, {refused} refused with a line",
        ran + refused,
        started.elapsed().as_secs_f64(),
    );
    assert!(ran > 0 && refused > 0, "the mutator explores both sides");
}
