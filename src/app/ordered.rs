//! Work on a batch spread over threads, its results taken in the batch's order: what a
//! command prints from them is the same whatever the number of threads.

use super::AppError;
use std::collections::BTreeMap;
use std::sync::{mpsc, Mutex};

/// Runs `work` on each item of `items` on `jobs` threads at once and hands each result to
/// `take`, in the items' order, on the calling thread. No item starts after a stop signal or
/// once `take` fails (its error is returned; the items at work finish first).
pub fn in_order<T: Send, R: Send>(
    items: impl Iterator<Item = T> + Send,
    jobs: usize,
    work: impl Fn(T) -> R + Sync,
    mut take: impl FnMut(R) -> Result<(), AppError>,
) -> Result<(), AppError> {
    let next = Mutex::new(items.enumerate());
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|scope| {
        for _ in 0..jobs.max(1) {
            let (tx, next, work) = (tx.clone(), &next, &work);
            scope.spawn(move || loop {
                let item = next.lock().unwrap_or_else(|e| e.into_inner()).next();
                let Some((i, item)) = item.filter(|_| !super::interrupt::requested()) else {
                    break;
                };
                if tx.send((i, work(item))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        // Results come in as items finish; they are taken in the items' order.
        let (mut waiting, mut want) = (BTreeMap::new(), 0);
        for (i, done) in rx {
            waiting.insert(i, done);
            while let Some(done) = waiting.remove(&want) {
                want += 1;
                take(done)?;
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_the_items_order_whatever_the_threads() {
        // Later items finish first: the wait shrinks as the index grows.
        let work = |i: u64| {
            std::thread::sleep(std::time::Duration::from_millis(20 - i));
            i * i
        };
        for jobs in [1, 3, 8] {
            let mut seen = Vec::new();
            in_order(0..20u64, jobs, work, |r| {
                seen.push(r);
                Ok(())
            })
            .unwrap();
            assert_eq!(
                seen,
                (0..20).map(|i| i * i).collect::<Vec<_>>(),
                "{jobs} jobs"
            );
        }
    }

    #[test]
    fn a_failing_take_stops_the_batch_with_its_error() {
        let mut taken = 0;
        let e = in_order(
            0..1000u32,
            4,
            |i| i,
            |i| {
                taken += 1;
                if i == 5 {
                    Err("stop here".to_string().into())
                } else {
                    Ok(())
                }
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("stop here"), "{e}");
        assert_eq!(taken, 6);
    }
}
