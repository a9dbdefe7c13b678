//! Which values a memory can hold, bounded by the writes that make them. A value written
//! comes from a chain of writes (a write's value computed from reads of earlier writes'
//! values); in an execution free of thin air that chain has no write twice, so it needs no
//! more writes of a thread to a memory than one of the thread's traces makes. Each value keeps
//! the fewest such writes its chains need, and a chain that needs more is no execution's: an
//! `atom.add` cannot add to its own result, however many rounds the search runs.

use super::Trace;
use crate::litmus::ast::Value;
use std::collections::BTreeMap;

/// Writes a chain uses, per thread and memory (`thread * memories + memory`).
type Need = Vec<u16>;

/// The most needs one value keeps; past it they are replaced by their componentwise minimum,
/// which lets through every value they do (and maybe more): never fewer values than exact.
const MAX_NEEDS: usize = 32;

/// The values of each memory with the needs of the chains that make them.
pub struct Provenance {
    memories: usize,
    /// Per thread and memory: the most writes one trace of the thread makes to the memory.
    bound: Vec<u16>,
    /// Per memory: each value and the minimal needs of its chains (none for the initial one).
    values: Vec<BTreeMap<Value, Vec<Need>>>,
}

impl Provenance {
    /// The initial values of `threads` threads over memories with these initial values.
    pub fn new(threads: usize, inits: &[Value]) -> Provenance {
        let zero = vec![0; threads * inits.len()];
        Provenance {
            memories: inits.len(),
            bound: zero.clone(),
            values: inits
                .iter()
                .map(|&v| BTreeMap::from([(v, vec![zero.clone()])]))
                .collect(),
        }
    }

    /// The values of memory `l` found so far.
    pub fn values(&self, l: usize) -> impl Iterator<Item = Value> + '_ {
        self.values[l].keys().copied()
    }

    /// Adds what the traces write, again and again until nothing new is found (each value's
    /// needs only shrink and stay under the bounds, so this ends).
    pub fn derive(&mut self, traces: &[Vec<Trace>]) {
        self.bound = self.bounds(traces);
        while self.derive_once(traces) {}
    }

    /// Per thread and memory, the most writes one of the thread's traces makes to it.
    fn bounds(&self, traces: &[Vec<Trace>]) -> Vec<u16> {
        let mut bound = vec![0u16; traces.len() * self.memories];
        for (t, per_thread) in traces.iter().enumerate() {
            for tr in per_thread {
                let mut count = vec![0u16; self.memories];
                for e in tr.events.iter().filter(|e| e.is_write()) {
                    count[e.loc] = count[e.loc].saturating_add(1);
                }
                for (l, c) in count.into_iter().enumerate() {
                    let b = &mut bound[t * self.memories + l];
                    *b = (*b).max(c);
                }
            }
        }
        bound
    }

    /// One pass over every write of every trace; whether a value or a smaller need was added.
    fn derive_once(&mut self, traces: &[Vec<Trace>]) -> bool {
        let mut changed = false;
        for (t, per_thread) in traces.iter().enumerate() {
            for tr in per_thread {
                for (i, e) in tr.events.iter().enumerate().filter(|(_, e)| e.is_write()) {
                    for need in self.needs_of(t, tr, i) {
                        changed |= insert(self.values[e.loc].entry(e.value).or_default(), need);
                    }
                }
            }
        }
        changed
    }

    /// The needs of write `i` of trace `tr` of thread `t`: each combination of the needs of
    /// the reads its value is computed from, joined, plus itself; those over the bounds left
    /// out.
    fn needs_of(&self, t: usize, tr: &Trace, i: usize) -> Vec<Need> {
        let mut acc: Vec<Need> = vec![vec![0; self.bound.len()]];
        for r in (0..tr.events.len()).filter(|&r| tr.data[i] >> r & 1 == 1) {
            let read = &tr.events[r];
            let Some(needs) = self.values[read.loc].get(&read.value) else {
                return Vec::new();
            };
            let mut next = Vec::new();
            for a in &acc {
                for b in needs {
                    insert(&mut next, a.iter().zip(b).map(|(x, y)| *x.max(y)).collect());
                }
            }
            acc = next;
        }
        let own = t * self.memories + tr.events[i].loc;
        acc.into_iter()
            .filter_map(|mut n| {
                n[own] += 1;
                n.iter().zip(&self.bound).all(|(x, b)| x <= b).then_some(n)
            })
            .collect()
    }
}

/// Adds `need` to the minimal needs `set` unless one of them is at most it; whether it was
/// added.
fn insert(set: &mut Vec<Need>, need: Need) -> bool {
    let le = |a: &Need, b: &Need| a.iter().zip(b).all(|(x, y)| x <= y);
    if set.iter().any(|s| le(s, &need)) {
        return false;
    }
    set.retain(|s| !le(&need, s));
    set.push(need);
    if set.len() > MAX_NEEDS {
        let min = (0..set[0].len())
            .map(|k| set.iter().map(|s| s[k]).min().unwrap_or(0))
            .collect();
        *set = vec![min];
    }
    true
}

#[cfg(test)]
mod tests {
    use super::super::Program;
    use crate::litmus::ast::Value;

    /// The values of each named location of a test with these threads (`|`-separated
    /// columns, `;`-ended rows).
    fn values(rows: &str, locs: &[&str]) -> Vec<Vec<Value>> {
        let text = format!("PTX T\n{{ x=0; y=0; }}\n{rows}\nexists (x == 0)\n");
        let test = crate::litmus::parse(&text, std::path::Path::new("t.litmus")).unwrap();
        let prog = Program::new(&test).unwrap();
        let (domains, _) = prog.domains().unwrap();
        let of = |l: &&str| domains[prog.phys_of(l).unwrap()].iter().copied().collect();
        locs.iter().map(of).collect()
    }

    /// An `add` adds to a value once per execution: never to its own result.
    #[test]
    fn an_atomic_add_never_adds_to_its_own_result() {
        let one = " P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n \
                   atom.relaxed.gpu.add r0, x, 1 | ld.relaxed.gpu r0, x ;\n \
                   | ld.relaxed.gpu r1, x ;";
        assert_eq!(values(one, &["x"]), [vec![0, 1]]);
        let two = " P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n \
                   red.relaxed.gpu.add x, 1 | atom.relaxed.gpu.add r0, x, 2 ;";
        assert_eq!(values(two, &["x"]), [vec![0, 1, 2, 3]]);
    }

    /// Two reads of one write feed one value: the chain holds that write once, not twice.
    #[test]
    fn two_reads_of_one_write_need_it_once() {
        let rows = " P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n \
                    st.relaxed.gpu x, 1 | ld.relaxed.gpu r0, x ;\n \
                    | ld.relaxed.gpu r1, x ;\n \
                    | add r2, r0, r1 ;\n \
                    | st.relaxed.gpu y, r2 ;";
        assert_eq!(values(rows, &["x", "y"]), [vec![0, 1], vec![0, 1, 2]]);
    }

    /// A loop that adds three times writes three times in one trace, so three adds of its
    /// own chain, and no more.
    #[test]
    fn a_loop_adds_as_often_as_one_trace_writes() {
        let rows = " P0@cta 0,gpu 0 ;\n \
                    mov r1, 0 ;\n \
                    L: ;\n \
                    atom.relaxed.gpu.add r0, x, 1 ;\n \
                    add r1, r1, 1 ;\n \
                    blt r1, 3, L ;";
        assert_eq!(values(rows, &["x"]), [vec![0, 1, 2, 3]]);
    }
}
