//! Bounded waits on a device. A host never blocks on a device call that could wait forever
//! (`cuStreamSynchronize`, `cuEventSynchronize`): it polls the work it queued, with a deadline,
//! and gives up with [`Stall::TimedOut`] when the deadline passes or [`Stall::Fault`] when the
//! device reports an error. Pure apart from the clock, so the waits are tested here with test
//! doubles of a queue (one that never finishes, one that faults).

use std::time::{Duration, Instant};

/// The state of work queued on a device, as one non-blocking query reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Poll {
    /// Everything queued has finished.
    Ready,
    /// Something is still running.
    Pending,
    /// The device reported an error (for CUDA, a sticky one such as an illegal address).
    Fault(String),
}

/// Work queued on a device that can be asked, without blocking, whether it has finished.
pub trait Queue {
    /// One non-blocking query.
    fn poll(&mut self) -> Poll;
}

/// Why a bounded wait did not end with the work done.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stall {
    /// The deadline passed with the work still running.
    TimedOut(String),
    /// The device reported an error while the host waited.
    Fault(String),
}

impl std::fmt::Display for Stall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stall::TimedOut(m) => write!(f, "timed out: {m}"),
            Stall::Fault(m) => write!(f, "device error: {m}"),
        }
    }
}

/// The longest sleep between two queries: short beside the 0.1 s batches of a run, long
/// enough that a waiting host uses no measurable CPU.
const MAX_NAP: Duration = Duration::from_millis(2);

/// Waits until `queue` is ready, at most until `deadline`. `what` names the work in the
/// message of a stall. The first queries follow each other at once (most waits end within
/// microseconds); then the host sleeps between queries, up to [`MAX_NAP`].
pub fn wait(queue: &mut dyn Queue, deadline: Instant, what: &str) -> Result<(), Stall> {
    let started = Instant::now();
    let mut nap = Duration::from_micros(1);
    loop {
        match queue.poll() {
            Poll::Ready => return Ok(()),
            Poll::Fault(m) => return Err(Stall::Fault(format!("{what}: {m}"))),
            Poll::Pending => {}
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(Stall::TimedOut(format!(
                "{what} still running after {:.1} s",
                now.duration_since(started).as_secs_f64()
            )));
        }
        std::thread::sleep(nap.min(deadline - now));
        nap = (nap * 2).min(MAX_NAP);
    }
}

/// Runs `read` once `queue` has finished, waiting until `deadline` at most; `read` never runs
/// when the wait gives up. A read back into pageable host memory (`cuMemcpyDtoHAsync` into a
/// `Vec`) returns only when the copy is done, so queued behind a kernel that never finishes it
/// would hold the host past every deadline; on an idle queue it ends at once.
pub fn read_when_idle<T>(
    queue: &mut dyn Queue,
    deadline: Instant,
    what: &str,
    read: impl FnOnce() -> T,
) -> Result<T, Stall> {
    wait(queue, deadline, what).map(|()| read())
}

/// How long a test's waits may take: its own time budget (when it has one) plus a margin for
/// the JIT, the set-up and one batch, never less than `floor`.
pub fn grace(budget: Option<Duration>, floor: Duration) -> Duration {
    budget.map_or(floor, |b| (b * 2 + Duration::from_secs(5)).max(floor))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel that never finishes.
    struct Hung;
    impl Queue for Hung {
        fn poll(&mut self) -> Poll {
            Poll::Pending
        }
    }

    /// Work that finishes after `left` more queries, or faults then.
    struct After {
        left: u32,
        then: Poll,
        polls: u32,
    }
    impl Queue for After {
        fn poll(&mut self) -> Poll {
            self.polls += 1;
            if self.left == 0 {
                return self.then.clone();
            }
            self.left -= 1;
            Poll::Pending
        }
    }

    #[test]
    fn a_kernel_that_never_finishes_ends_as_timed_out_at_its_deadline() {
        let t0 = Instant::now();
        let r = wait(&mut Hung, t0 + Duration::from_millis(150), "MP's launches");
        let took = t0.elapsed();
        match r {
            Err(Stall::TimedOut(m)) => assert!(m.starts_with("MP's launches still running"), "{m}"),
            other => panic!("expected a time-out, got {other:?}"),
        }
        assert!(
            took >= Duration::from_millis(150),
            "gave up early: {took:?}"
        );
        assert!(
            took < Duration::from_millis(150) + Duration::from_secs(1),
            "{took:?}"
        );
    }

    #[test]
    fn work_that_finishes_or_faults_is_reported_as_such() {
        let far = Instant::now() + Duration::from_secs(30);
        let mut done = After {
            left: 40,
            then: Poll::Ready,
            polls: 0,
        };
        assert_eq!(wait(&mut done, far, "copy"), Ok(()));
        assert_eq!(done.polls, 41);
        let mut bad = After {
            left: 3,
            then: Poll::Fault("CUDA_ERROR_ILLEGAL_ADDRESS".into()),
            polls: 0,
        };
        let e = wait(&mut bad, far, "IRIW's launches").unwrap_err();
        assert_eq!(
            e,
            Stall::Fault("IRIW's launches: CUDA_ERROR_ILLEGAL_ADDRESS".into())
        );
        assert_eq!(
            e.to_string(),
            "device error: IRIW's launches: CUDA_ERROR_ILLEGAL_ADDRESS"
        );
        // A deadline already past still asks once: finished work is not called a time-out.
        let mut ready = After {
            left: 0,
            then: Poll::Ready,
            polls: 0,
        };
        assert_eq!(wait(&mut ready, Instant::now(), "x"), Ok(()));
    }

    #[test]
    fn results_are_read_back_only_once_the_queue_is_idle() {
        // Behind a kernel that never finishes, the read (which would block) is never made.
        let t0 = Instant::now();
        let mut reads = 0;
        let r = read_when_idle(
            &mut Hung,
            t0 + Duration::from_millis(100),
            "MP's batch",
            || reads += 1,
        );
        assert!(matches!(r, Err(Stall::TimedOut(_))), "{r:?}");
        assert_eq!(reads, 0);
        assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
        // Faulting work is not read either; finished work is read once, after the last poll.
        let mut bad = After {
            left: 2,
            then: Poll::Fault("CUDA_ERROR_LAUNCH_FAILED".into()),
            polls: 0,
        };
        let far = Instant::now() + Duration::from_secs(30);
        assert!(read_when_idle(&mut bad, far, "x", || reads += 1).is_err());
        assert_eq!(reads, 0);
        let mut done = After {
            left: 5,
            then: Poll::Ready,
            polls: 0,
        };
        let polls_at_read = read_when_idle(&mut done, far, "x", || 6);
        assert_eq!(polls_at_read, Ok(6));
        assert_eq!(done.polls, 6);
    }

    #[test]
    fn the_grace_covers_the_budget_and_has_a_floor() {
        let floor = Duration::from_secs(20);
        assert_eq!(grace(None, floor), floor);
        assert_eq!(grace(Some(Duration::from_secs(1)), floor), floor);
        assert_eq!(
            grace(Some(Duration::from_secs(60)), floor),
            Duration::from_secs(125)
        );
    }
}
