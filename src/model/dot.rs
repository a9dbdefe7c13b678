//! Execution graphs in Graphviz `dot` format: one cluster per thread in program order, edges
//! coloured by relation (`cause`, derived from the others, dashed), the events of an offending
//! cycle drawn bold red.

use super::explain::event_name;
use super::verdict::{Execution, Relation};
use std::fmt::Write;

fn colour(rel: Relation) -> &'static str {
    match rel {
        Relation::Po => "black",
        Relation::Rf => "red",
        Relation::Co => "blue",
        Relation::Fr => "orange",
        Relation::Sync => "darkgreen",
        Relation::Fsc => "purple",
        Relation::Rmw => "brown",
        Relation::Cause => "darkcyan",
        Relation::Dep => "gray",
    }
}

fn quote(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The graph of `ex` titled `title`, with the events of `cycle` highlighted.
pub fn to_dot(ex: &Execution, title: &str, cycle: &[usize]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "digraph execution {{");
    let _ = writeln!(
        s,
        "  label=\"{}\"; labelloc=t; fontname=\"monospace\";",
        quote(title)
    );
    let _ = writeln!(s, "  node [shape=box, fontname=\"monospace\"];");
    let mut threads: Vec<Option<usize>> = ex.events.iter().map(|e| e.thread).collect();
    threads.sort();
    threads.dedup();
    for t in threads {
        let name = t.map_or("init".to_string(), |t| format!("P{t}"));
        let _ = writeln!(s, "  subgraph cluster_{name} {{ label=\"{name}\";");
        for (i, e) in ex.events.iter().enumerate().filter(|(_, e)| e.thread == t) {
            let style = if cycle.contains(&i) {
                ", color=red, penwidth=2"
            } else {
                ""
            };
            let _ = writeln!(
                s,
                "    e{i} [label=\"e{i}: {}\"{style}];",
                quote(&event_name(ex, i))
            );
            let _ = e;
        }
        let _ = writeln!(s, "  }}");
    }
    for (rel, a, b) in &ex.edges {
        let on_cycle = cycle
            .iter()
            .position(|x| x == a)
            .is_some_and(|p| cycle[(p + 1) % cycle.len()] == *b);
        let width = if on_cycle { ", penwidth=2.5" } else { "" };
        // A derived relation is dashed, as herd7 draws the relations a model defines.
        let dash = if *rel == Relation::Cause {
            ", style=dashed"
        } else {
            ""
        };
        let _ = writeln!(
            s,
            "  e{a} -> e{b} [label=\"{rel}\", color={}, fontcolor={}{width}{dash}];",
            colour(*rel),
            colour(*rel)
        );
    }
    let _ = writeln!(s, "}}");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::verdict::ExecEvent;
    use crate::outcome::Outcome;

    #[test]
    fn dot_names_every_event_and_edge() {
        let ex = Execution {
            outcome: Outcome(vec![1]),
            events: vec![
                ExecEvent {
                    thread: None,
                    instr: 0,
                    label: "Winit x=0".into(),
                },
                ExecEvent {
                    thread: Some(0),
                    instr: 0,
                    label: "W.weak x=1".into(),
                },
            ],
            edges: vec![(Relation::Co, 0, 1)],
        };
        let d = to_dot(&ex, "t \"q\"", &[1]);
        assert!(d.starts_with("digraph execution {"));
        assert!(d.contains("e1 [label=\"e1: P0.0:W.weak x=1\", color=red"));
        assert!(d.contains("e0 -> e1 [label=\"co\", color=blue"));
        assert!(d.contains("t \\\"q\\\""));
    }
}
