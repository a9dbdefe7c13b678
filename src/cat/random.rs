//! Seeded random litmus tests for differential testing: 2–4 threads spread over three CTAs of
//! one GPU, each with one to three of `ld`, `st`, `fence`, `atom` (`exch`, `add`, `cas`) and
//! `red`, every semantics and scope, over two locations. Stores write values unique per
//! location (at most three per location) so reads-from shows in the outcome; the condition names every register and
//! location, so the allowed set is the whole final state.

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

/// The text of random test number `index` of the stream of `seed`.
pub fn test_text(seed: u64, index: u64) -> String {
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
    render(&format!("R{seed}-{index}"), &threads)
}

fn render(name: &str, threads: &[Thread]) -> String {
    let mut s = format!("PTX {name}\n{{ x=0; y=0; }}\n");
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
    use crate::litmus;
    use std::path::Path;

    #[test]
    fn tests_are_reproducible_parse_and_vary() {
        let a = test_text(7, 3);
        assert_eq!(a, test_text(7, 3));
        assert_ne!(a, test_text(7, 4));
        for i in 0..200 {
            let t = test_text(1, i);
            let test = litmus::parse(&t, Path::new("random.litmus"))
                .unwrap_or_else(|e| panic!("{e}\n{t}"));
            assert!((2..=4).contains(&test.threads.len()));
        }
    }
}
