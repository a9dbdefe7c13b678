//! Whether a state graph lets a fair run go on for ever: Tarjan's strongly connected
//! components, iteratively (the graphs have up to `MAX_STATES` states).

/// Whether some strongly connected component of the graph (`succ[i]`: the successors of state
/// `i`, all reachable from state 0) has a cycle and no edge out of it.
pub fn closed_cycle(succ: &[Vec<usize>]) -> bool {
    let comp = components(succ);
    let n = comp.iter().copied().max().map_or(0, |m| m + 1);
    let mut cyclic = vec![false; n];
    let mut leaves = vec![false; n];
    for (i, next) in succ.iter().enumerate() {
        for &j in next {
            if comp[j] == comp[i] {
                cyclic[comp[i]] = true;
            } else {
                leaves[comp[i]] = true;
            }
        }
    }
    (0..n).any(|c| cyclic[c] && !leaves[c])
}

/// The component of each state (Tarjan's algorithm with an explicit stack).
fn components(succ: &[Vec<usize>]) -> Vec<usize> {
    const NONE: usize = usize::MAX;
    let n = succ.len();
    let (mut index, mut low, mut comp) = (vec![NONE; n], vec![0; n], vec![NONE; n]);
    let (mut stack, mut on) = (Vec::new(), vec![false; n]);
    let (mut next_index, mut next_comp) = (0, 0);
    for root in 0..n {
        if index[root] != NONE {
            continue;
        }
        // (state, how many of its successors are done)
        let mut calls = vec![(root, 0)];
        while let Some(&mut (v, ref mut k)) = calls.last_mut() {
            if *k == 0 && index[v] == NONE {
                index[v] = next_index;
                low[v] = next_index;
                next_index += 1;
                stack.push(v);
                on[v] = true;
            }
            if let Some(&w) = succ[v].get(*k) {
                *k += 1;
                if index[w] == NONE {
                    calls.push((w, 0));
                } else if on[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(u, _)) = calls.last() {
                low[u] = low[u].min(low[v]);
            }
            if low[v] == index[v] {
                while let Some(w) = stack.pop() {
                    on[w] = false;
                    comp[w] = next_comp;
                    if w == v {
                        break;
                    }
                }
                next_comp += 1;
            }
        }
    }
    comp
}

#[cfg(test)]
mod tests {
    use super::closed_cycle;

    #[test]
    fn a_cycle_is_closed_only_without_a_way_out() {
        // 0 -> 1 <-> 2, 2 -> 3 (the end): the cycle can be left.
        assert!(!closed_cycle(&[vec![1], vec![2], vec![1, 3], vec![]]));
        // Without the way out it is closed.
        assert!(closed_cycle(&[vec![1], vec![2], vec![1], vec![]]));
        // A self-loop is a cycle; a dead end alone is not.
        assert!(closed_cycle(&[vec![0]]));
        assert!(!closed_cycle(&[vec![1], vec![]]));
    }
}
