//! IRIW widened: N writers each write one of N locations, N readers each read all N, reader j
//! starting at location j. The condition asks every reader to see only "its" write, so the
//! readers disagree on the order of all N writes. These are the model's large cases (2N threads,
//! N + N² events, 2^(N²) outcomes), for `bench model`; they are not cycles of one edge each.

use super::annot::FenceKind;
use super::place::Place;
use super::skeleton::loc_name;
use super::GenError;
use crate::litmus::ast::Scope;
use std::fmt::Write;

/// The test text of a widened IRIW with `n` writers, relaxed accesses at `scope`, and
/// `between` (if any) between a reader's loads.
pub fn iriw(
    n: usize,
    scope: Scope,
    between: Option<FenceKind>,
    place: &Place,
) -> Result<super::Generated, GenError> {
    if !(2..=6).contains(&n) {
        return Err(GenError::msg(format!(
            "iriw-wide {n}: expected 2 to 6 writers"
        )));
    }
    let s = scope.as_str();
    let fence = between.map(|f| f.with_scope(scope));
    let mut cols: Vec<Vec<String>> = (0..n)
        .map(|i| vec![format!("st.relaxed.{s} {}, 1", loc_name(i))])
        .collect();
    let mut conds = Vec::new();
    for j in 0..n {
        let mut col = Vec::new();
        for k in 0..n {
            if let (true, Some(f)) = (k > 0, fence) {
                col.push(f.instr());
            }
            col.push(format!("ld.relaxed.{s} r{k}, {}", loc_name((j + k) % n)));
            conds.push(format!("P{}:r{k} == {}", n + j, u8::from(k == 0)));
        }
        cols.push(col);
    }
    let fence_name = fence.map_or(String::new(), |f| format!("_{}", f.instr()));
    let name = format!("IRIW-wide{n}+rlx.{s}{fence_name}-{}", place.name);
    let mut src = format!("PTX {name}\n\"{n} writers, {n} readers each reading all {n} locations in a rotated order\"\n{{\n");
    for i in 0..n {
        let _ = writeln!(src, "{} = 0;", loc_name(i));
    }
    src.push_str("}\n");
    let places = place.threads(2 * n)?;
    super::build::threads_table(&mut src, &places, &cols, &conds);
    let note = format!(
        "IRIW widened to {n} writers and {n} readers, {} threads, {} events",
        2 * n,
        n + n * n
    );
    super::build::finish(&name, &src, &note)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_widened_iriw_has_its_threads_and_events() {
        let g = iriw(4, Scope::Gpu, None, &Place::parse("diffcta").unwrap()).unwrap();
        assert_eq!(g.test.threads.len(), 8);
        let events: usize = g.test.threads.iter().map(|t| t.body.len()).sum();
        assert_eq!(events, 20);
        let f = iriw(
            3,
            Scope::Gpu,
            Some(FenceKind::parse("sc").unwrap()),
            &Place::parse("diffcta").unwrap(),
        )
        .unwrap();
        assert!(f.text.contains("fence.sc.gpu"), "{}", f.text);
        assert!(iriw(9, Scope::Gpu, None, &Place::parse("diffcta").unwrap()).is_err());
    }
}
