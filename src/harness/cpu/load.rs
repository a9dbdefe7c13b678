//! How busy the machine is: the CPU backend sees weak behaviour only while a test's roles run
//! at the same time, so its rates fall when other work takes the cores. A run says so: the
//! load average before it starts, and the CPU time each test got.

/// The load average over the last minute (Linux `/proc/loadavg`); `None` elsewhere.
pub fn load_average() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// Nanoseconds the calling thread has spent on a CPU (Linux `/proc/thread-self/schedstat`,
/// the scheduler's count); `None` elsewhere.
pub fn thread_cpu_ns() -> Option<u64> {
    // The scheduler adds a running thread's time to that count only at its timer tick (every
    // 1 to 10 ms) or when it schedules; a yield makes it schedule, so the count read next is
    // exact. Without it, a test of a few ticks read as up to half or twice its CPU time.
    std::thread::yield_now();
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// Whether a test of `threads` roles cannot have its cores to itself: the other work (`load`
/// runnable tasks on average) and its roles need more than the `cores` there are, with half a
/// core of slack for the run's own short tasks.
pub fn loaded(load: f64, cores: usize, threads: usize) -> bool {
    load + threads as f64 > cores as f64 + 0.5
}

/// The warning `run` prints before a CPU run on a loaded machine (for its tests of `threads`
/// roles or more), or `None`.
pub fn warning(load: f64, cores: usize, threads: usize) -> Option<String> {
    loaded(load, cores, threads).then(|| {
        format!(
            "the machine is loaded (load average {load:.2} over the last minute, {cores} \
             core{}): the CPU backend shows weak behaviour only while a test's threads run at \
             the same time, so its weak rates will be lower and vary between runs; the `cpu` \
             column says how many cores' worth each test got",
            if cores == 1 { "" } else { "s" }
        )
    })
}

/// Whether a test of `threads` roles got less CPU than it needed at once: less than 80 % of
/// `min(threads, cores)` cores' worth while it ran.
pub fn starved(cpu_used: f64, cores: usize, threads: usize) -> bool {
    cpu_used < 0.8 * threads.min(cores) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_two_thread_test_on_two_cores_needs_them_both_free() {
        assert!(!loaded(0.2, 2, 2));
        assert!(loaded(1.0, 2, 2));
        assert!(!loaded(4.0, 16, 4));
        assert!(loaded(13.0, 16, 4));
        assert!(warning(0.2, 2, 2).is_none());
        let w = warning(3.5, 2, 2).unwrap();
        assert!(
            w.contains("load average 3.50") && w.contains("2 cores"),
            "{w}"
        );
    }

    #[test]
    fn a_test_is_starved_below_four_fifths_of_the_cores_it_can_use() {
        assert!(!starved(1.9, 2, 2));
        assert!(starved(1.2, 2, 2));
        assert!(!starved(1.7, 2, 4));
        assert!(!starved(0.9, 1, 2));
        assert!(starved(0.5, 1, 2));
    }

    #[test]
    fn a_threads_cpu_count_is_exact_not_rounded_to_the_timer_tick() {
        if thread_cpu_ns().is_none() {
            eprintln!("no /proc/thread-self/schedstat: nothing to check here");
            return;
        }
        // A count rounded to ticks reads a 7 ms spin as 4 or 8 ms; the exact count never
        // exceeds the wall time that passed.
        for _ in 0..10 {
            let wall = std::time::Instant::now();
            let before = thread_cpu_ns().unwrap();
            while wall.elapsed() < std::time::Duration::from_millis(7) {
                std::hint::spin_loop();
            }
            let used = thread_cpu_ns().unwrap() - before;
            let elapsed = wall.elapsed().as_nanos() as u64;
            assert!(
                used <= elapsed + 100_000,
                "{used} ns on a CPU in {elapsed} ns"
            );
        }
    }

    #[test]
    fn this_thread_has_used_some_cpu_time_and_the_load_is_a_number() {
        if !std::path::Path::new("/proc/thread-self/schedstat").exists() {
            eprintln!("no /proc: nothing to check here");
            return;
        }
        // The thread's count advances as it computes (within a bounded wait on a busy machine).
        let before = thread_cpu_ns().unwrap();
        let spin = std::time::Instant::now();
        while thread_cpu_ns().unwrap() < before + 20_000_000 && spin.elapsed().as_secs() < 10 {
            std::hint::black_box(0u64);
        }
        assert!(thread_cpu_ns().unwrap() >= before + 20_000_000);
        assert!(load_average().unwrap() >= 0.0);
    }
}
