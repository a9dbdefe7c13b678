//! Seeded random litmus tests for differential testing: 2–4 threads spread over three CTAs of
//! one GPU, each with one to three of `ld`, `st`, `fence`, `atom` (`exch`, `add`, `cas`) and
//! `red`, every semantics and scope, over two locations. Stores write values unique per
//! location (at most three per location) so reads-from shows in the outcome; the condition
//! names every register and location, so the allowed set is the whole final state.
//!
//! The barrier stream (`RB<seed>-<index>`) is the same test with a CTA barrier added: every
//! thread of one CTA meets at `bar.cta.sync` or `bar.cta.arrive` (docs/barriers.md), once or
//! twice, sometimes with a quorum, so every barrier group completes and no combination hangs.
//! The proxy stream (`RP<seed>-<index>`) is the same test with weak accesses through aliases
//! and other proxies, and proxy fences.

use crate::rng::Rng;

const LOCS: [&str; 2] = ["x", "y"];
const SCOPES: [&str; 3] = ["cta", "gpu", "sys"];

struct Thread {
    cta: usize,
    body: Vec<String>,
    regs: usize,
}

/// One random instruction for a thread; `next_value` numbers stores per location.
fn instr(rng: &mut Rng, t: &mut Thread, next_value: &mut [u32; 2]) -> String {
    let l = rng.below(2);
    let loc = LOCS[l];
    let scope = rng.pick(&SCOPES);
    // At most three writes per location: their coherence orders stay few.
    let full = next_value[l] >= 3;
    let mut value = || {
        next_value[l] += 1;
        next_value[l]
    };
    match rng.below(6) {
        2..=5 if full => format!("ld.weak r{}, {loc}", {
            t.regs += 1;
            t.regs - 1
        }),
        0 | 1 => {
            let r = t.regs;
            t.regs += 1;
            match rng.pick(&["weak", "relaxed", "acquire"]) {
                "weak" => format!("ld.weak r{r}, {loc}"),
                sem => format!("ld.{sem}.{scope} r{r}, {loc}"),
            }
        }
        2 | 3 => match rng.pick(&["weak", "relaxed", "release"]) {
            "weak" => format!("st.weak {loc}, {}", value()),
            sem => format!("st.{sem}.{scope} {loc}, {}", value()),
        },
        4 => format!("fence.{}.{scope}", rng.pick(&["sc", "acq_rel"])),
        _ => {
            let sem = rng.pick(&["relaxed", "acquire", "release", "acq_rel"]);
            let op = rng.pick(&["exch", "add", "cas", "red"]);
            let r = t.regs;
            let v = value();
            match op {
                "red" => format!(
                    "red.{}.{scope}.add {loc}, {v}",
                    rng.pick(&["relaxed", "release"])
                ),
                "cas" => {
                    t.regs += 1;
                    let expect = rng.below(v as usize);
                    format!("atom.{sem}.{scope}.cas r{r}, {loc}, {expect}, {v}")
                }
                _ => {
                    t.regs += 1;
                    format!("atom.{sem}.{scope}.{op} r{r}, {loc}, {v}")
                }
            }
        }
    }
}

/// The most tests a family or `gen --tests` writes from one stream: files, not a search.
pub const MAX_TESTS: u64 = 100_000;

/// Which random stream: the plain tests, or the same tests with more.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// `R<seed>-<index>`: `ld`, `st`, `fence`, `atom` and `red`.
    Plain,
    /// `RB<seed>-<index>`: the plain test with one CTA's threads meeting at a barrier.
    Barriers,
    /// `RP<seed>-<index>`: the plain test with some weak accesses through another proxy or a
    /// generic alias, and proxy fences.
    Proxies,
}

impl Stream {
    /// The stream a family's `stream` word names.
    pub fn parse(word: &str) -> Option<Stream> {
        match word {
            "plain" => Some(Stream::Plain),
            "barriers" => Some(Stream::Barriers),
            "proxies" => Some(Stream::Proxies),
            _ => None,
        }
    }

    /// The prefix of its tests' names.
    fn prefix(self) -> &'static str {
        match self {
            Stream::Plain => "R",
            Stream::Barriers => "RB",
            Stream::Proxies => "RP",
        }
    }
}

/// The name of random test number `index` of `stream` of `seed`: `R<seed>-<index>`,
/// `RB<seed>-<index>` in the barrier stream, `RP<seed>-<index>` in the proxy stream.
pub fn test_name(seed: u64, index: u64, stream: Stream) -> String {
    format!("{}{seed}-{index}", stream.prefix())
}

/// The text of random test number `index` of `stream` of `seed`. The draws of the plain test
/// come first, so `RB7-3` and `RP7-3` are `R7-3` with barriers or proxies added.
pub fn test_text(seed: u64, index: u64, stream: Stream) -> String {
    let mut rng = Rng::new(seed ^ index.wrapping_mul(0x2545_f491_4f6c_dd1d));
    let n = 2 + rng.below(3);
    let mut values = [0u32; 2];
    let mut threads: Vec<Thread> = (0..n)
        .map(|_| Thread {
            cta: rng.below(3),
            body: Vec::new(),
            regs: 0,
        })
        .collect();
    for t in &mut threads {
        for _ in 0..1 + rng.below(3) {
            let i = instr(&mut rng, t, &mut values);
            t.body.push(i);
        }
    }
    let aliases = match stream {
        Stream::Plain => Vec::new(),
        Stream::Barriers => {
            add_barriers(&mut rng, &mut threads);
            Vec::new()
        }
        Stream::Proxies => add_proxies(&mut rng, &mut threads),
    };
    render(&test_name(seed, index, stream), &threads, &aliases)
}

/// The aliases of a location: a generic one (another virtual address) and one per proxy that
/// weak accesses may use, with the instructions that read and write through each.
const ALIASES: [(&str, &str, Option<&str>, Option<&str>); 4] = [
    ("a", "generic", Some("ld.weak"), Some("st.weak")),
    ("s", "surface", Some("suld.weak"), Some("sust.weak")),
    ("t", "texture", Some("tld.weak"), None),
    ("c", "constant", Some("cold.weak"), None),
];

/// Turns about three in four weak loads and stores into accesses through an alias of their
/// location (generic, surface, texture or constant), and puts up to two proxy fences
/// (`fence.proxy.{alias,surface,texture,constant}`) into random threads; returns the alias
/// declarations used.
fn add_proxies(rng: &mut Rng, threads: &mut [Thread]) -> Vec<String> {
    let mut used = std::collections::BTreeSet::new();
    for t in threads.iter_mut() {
        for ins in &mut t.body {
            let Some((op, rest)) = ins.split_once(' ') else {
                continue;
            };
            let load = op == "ld.weak";
            if !(load || op == "st.weak") || rng.below(4) == 0 {
                continue;
            }
            let (suffix, proxy, ld, st) = ALIASES[rng.below(ALIASES.len())];
            let Some(new_op) = (if load { ld } else { st }) else {
                continue;
            };
            let (a, b) = rest.split_once(", ").expect("two operands");
            let (a, b) = if load {
                (a.to_string(), format!("{b}{suffix}"))
            } else {
                (format!("{a}{suffix}"), b.to_string())
            };
            let loc = if load { &b } else { &a };
            let target = &loc[..loc.len() - suffix.len()];
            used.insert(format!("{loc} @ {proxy} aliases {target}"));
            *ins = format!("{new_op} {a}, {b}");
        }
    }
    for _ in 0..rng.below(3) {
        let fence = rng.pick(&["alias", "surface", "texture", "constant"]);
        let t = rng.below(threads.len());
        let at = rng.below(threads[t].body.len() + 1);
        threads[t].body.insert(at, format!("fence.proxy.{fence}"));
    }
    used.into_iter().collect()
}

/// Makes every thread of one CTA meet at a barrier (instance 1), once or twice: moves a
/// second thread into the CTA when it holds one, makes each thread's barrier a `sync` or an
/// `arrive` with at least one `sync` (arrivals alone wait for nothing), and gives one in four
/// tests a quorum of two or more of its members, the same in both rounds. Every member
/// reaches every round, so no combination hangs (the hang rules have their own tests in
/// `litmus/barrier-quorum/`).
fn add_barriers(rng: &mut Rng, threads: &mut [Thread]) {
    let first = rng.below(threads.len());
    let cta = threads[first].cta;
    if threads.iter().filter(|t| t.cta == cta).count() < 2 {
        let other = (first + 1 + rng.below(threads.len() - 1)) % threads.len();
        threads[other].cta = cta;
    }
    let members: Vec<usize> = (0..threads.len())
        .filter(|&i| threads[i].cta == cta)
        .collect();
    let rounds = if rng.below(4) == 0 { 2 } else { 1 };
    // One quorum for every round: a hardware barrier has one thread count.
    let quorum = (rng.below(4) == 0).then(|| 2 + rng.below(members.len() - 1));
    let mut after = vec![0; threads.len()];
    for _ in 0..rounds {
        let waits = 1 + rng.below((1 << members.len()) - 1);
        for (k, &i) in members.iter().enumerate() {
            let kind = if waits >> k & 1 == 1 {
                "sync"
            } else {
                "arrive"
            };
            let operands = quorum.map_or("1".to_string(), |q| format!("1, 1, {q}"));
            let body = &mut threads[i].body;
            let at = after[i] + rng.below(body.len() + 1 - after[i]);
            body.insert(at, format!("bar.cta.{kind} {operands}"));
            after[i] = at + 1;
        }
    }
}

fn render(name: &str, threads: &[Thread], aliases: &[String]) -> String {
    let declared: String = aliases.iter().map(|a| format!(" {a};")).collect();
    let mut s = format!("PTX {name}\n{{ x=0; y=0;{declared} }}\n");
    let head: Vec<String> = (0..threads.len())
        .map(|i| format!("P{i}@cta {},gpu 0", threads[i].cta))
        .collect();
    s.push_str(&format!(" {} ;\n", head.join(" | ")));
    let rows = threads.iter().map(|t| t.body.len()).max().unwrap_or(0);
    for k in 0..rows {
        let cells: Vec<&str> = threads
            .iter()
            .map(|t| t.body.get(k).map_or("", String::as_str))
            .collect();
        s.push_str(&format!(" {} ;\n", cells.join(" | ")));
    }
    let mut terms: Vec<String> = Vec::new();
    for (i, t) in threads.iter().enumerate() {
        for r in 0..t.regs {
            terms.push(format!("P{i}:r{r} == 0"));
        }
    }
    terms.extend(LOCS.iter().map(|l| format!("{l} == 0")));
    s.push_str(&format!("exists ({})\n", terms.join(" /\\ ")));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::litmus::{
        self,
        ast::{Barrier, Fence, Instr, Test},
    };
    use std::collections::HashSet;
    use std::path::Path;

    #[test]
    fn tests_are_reproducible_parse_and_vary() {
        let a = test_text(7, 3, Stream::Plain);
        assert_eq!(a, test_text(7, 3, Stream::Plain));
        assert_ne!(a, test_text(7, 4, Stream::Plain));
        for i in 0..200 {
            let t = test_text(1, i, Stream::Plain);
            let test = litmus::parse(&t, Path::new("random.litmus"))
                .unwrap_or_else(|e| panic!("{e}\n{t}"));
            assert!((2..=4).contains(&test.threads.len()));
        }
    }

    /// The test `text` holds.
    fn parse(text: &str) -> Test {
        litmus::parse(text, Path::new("random.litmus")).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    /// A barrier test is its plain test with barriers added, met by two or more threads of
    /// one CTA the same number of times, at least one of them waiting, all with one quorum
    /// (or none), so that the GPU can run it.
    #[test]
    fn barrier_tests_add_one_cta_barrier_to_the_plain_test() {
        let (mut quorums, mut twice) = (0, 0);
        for i in 0..300 {
            let (plain, test) = (
                parse(&test_text(3, i, Stream::Plain)),
                parse(&test_text(3, i, Stream::Barriers)),
            );
            let mut met = Vec::new();
            let mut quorum = HashSet::new();
            for (p, t) in plain.threads.iter().zip(&test.threads) {
                let (bars, rest): (Vec<&Instr>, Vec<&Instr>) =
                    t.body.iter().partition(|x| matches!(x, Instr::Barrier(_)));
                assert!(rest.into_iter().eq(&p.body), "{i}: {t:?}");
                if !bars.is_empty() {
                    met.push((t.place.cta, bars.len()));
                }
                for b in bars {
                    if let Instr::Barrier(Barrier::Cta { quorum: q, .. }) = b {
                        quorum.insert(q.clone());
                    }
                }
            }
            assert_eq!(quorum.len(), 1, "{i}: quorums {quorum:?}");
            assert!(
                met.len() >= 2 && met.iter().all(|&m| m == met[0]),
                "{i}: {met:?}"
            );
            let text = test_text(3, i, Stream::Barriers);
            assert!(text.contains("bar.cta.sync"), "{text}");
            quorums += usize::from(text.contains(", 1, "));
            twice += usize::from(met[0].1 == 2);
        }
        assert!(
            quorums > 30 && twice > 30,
            "{quorums} quorums, {twice} twice, of 300"
        );
    }

    /// A proxy test is its plain test with some weak accesses renamed to aliases and proxy
    /// fences added; it declares the aliases it uses and no others.
    #[test]
    fn proxy_tests_rename_weak_accesses_and_add_proxy_fences() {
        let (mut aliased, mut fenced) = (0, 0);
        for i in 0..300 {
            let text = test_text(3, i, Stream::Proxies);
            let (plain, test) = (parse(&test_text(3, i, Stream::Plain)), parse(&text));
            for (p, t) in plain.threads.iter().zip(&test.threads) {
                let fences = t
                    .body
                    .iter()
                    .filter(|x| matches!(x, Instr::Fence(Fence::Proxy(_))))
                    .count();
                assert_eq!(t.body.len(), p.body.len() + fences, "{text}");
                fenced += fences;
            }
            for alias in text.split(';').filter(|d| d.contains(" aliases ")) {
                let name = alias.split_whitespace().next().unwrap();
                let uses = text.matches(&format!(" {name},")).count()
                    + text.matches(&format!(", {name} ")).count();
                assert!(uses > 0, "{name} declared, not used:\n{text}");
                aliased += 1;
            }
        }
        assert!(
            aliased > 150 && fenced > 150,
            "{aliased} aliases, {fenced} proxy fences"
        );
    }
}
