//! Fault injection: a test double of the device layer for the tests of the hang and fault
//! paths, which must work without a GPU. The run option `inject=hang:NAME:SECS` makes test
//! `NAME` wait, through the real bounded wait, on a queue that never finishes, with a deadline
//! of `SECS` seconds; `inject=fault:NAME` makes it meet a sticky device error. Either way the
//! test ends as a GPU test would (`timed out` / `device error`) and the device is lost for the
//! rest of the process. The option is taken out before a backend sees the options.

use super::watchdog::{self, Poll, Queue};
use super::RunError;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The option key.
pub const KEY: &str = "inject";

/// What to inject into which test.
#[derive(Clone, Debug, PartialEq)]
pub enum Injection {
    /// The test's launches never finish; the wait gives up after this long.
    Hang(String, Duration),
    /// The test's launches end in a sticky device error.
    Fault(String),
}

/// Reads `inject=...`, if given.
pub fn parse(options: &BTreeMap<String, String>) -> Result<Option<Injection>, String> {
    let Some(v) = options.get(KEY) else {
        return Ok(None);
    };
    let bad = || format!("option {KEY}={v}: expected hang:TEST:SECONDS or fault:TEST");
    let parts: Vec<&str> = v.split(':').collect();
    match parts.as_slice() {
        ["hang", name, secs] if !name.is_empty() => {
            let s: f64 = secs.parse().map_err(|_| bad())?;
            if !(0.0..=600.0).contains(&s) {
                return Err(bad());
            }
            Ok(Some(Injection::Hang(
                name.to_string(),
                Duration::from_secs_f64(s),
            )))
        }
        ["fault", name] if !name.is_empty() => Ok(Some(Injection::Fault(name.to_string()))),
        _ => Err(bad()),
    }
}

/// The value of [`KEY`] that [`parse`] reads back as `injection`.
pub fn spell(injection: &Injection) -> String {
    match injection {
        Injection::Hang(name, d) => format!("hang:{name}:{}", d.as_secs_f64()),
        Injection::Fault(name) => format!("fault:{name}"),
    }
}

/// The options a backend sees: all but [`KEY`].
pub fn backend_options(options: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let mut o = options.clone();
    o.remove(KEY);
    o
}

/// A queue that never finishes.
struct Hung;
impl Queue for Hung {
    fn poll(&mut self) -> Poll {
        Poll::Pending
    }
}

/// A queue whose work ended in a sticky error.
struct Faulted;
impl Queue for Faulted {
    fn poll(&mut self) -> Poll {
        Poll::Fault("CUDA_ERROR_ILLEGAL_ADDRESS (injected)".into())
    }
}

/// Runs the injection for test `name`, if it targets it: the error the test ends with.
pub fn apply(injection: &Injection, name: &str) -> Option<RunError> {
    let (mut queue, deadline): (Box<dyn Queue>, Instant) = match injection {
        Injection::Hang(n, d) if n == name => (Box::new(Hung), Instant::now() + *d),
        Injection::Fault(n) if n == name => (Box::new(Faulted), Instant::now()),
        _ => return None,
    };
    let what = format!("{name}'s launches");
    watchdog::wait(queue.as_mut(), deadline, &what)
        .err()
        .map(RunError::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(v: &str) -> BTreeMap<String, String> {
        BTreeMap::from([
            (KEY.to_string(), v.to_string()),
            ("pack".into(), "1".into()),
        ])
    }

    #[test]
    fn injections_parse_and_leave_the_backend_options_alone() {
        assert_eq!(
            parse(&opts("hang:MP:0.5")).unwrap(),
            Some(Injection::Hang("MP".into(), Duration::from_millis(500)))
        );
        assert_eq!(
            parse(&opts("fault:SB")).unwrap(),
            Some(Injection::Fault("SB".into()))
        );
        assert_eq!(parse(&BTreeMap::new()).unwrap(), None);
        for bad in [
            "hang:MP",
            "hang::1",
            "crash:MP",
            "hang:MP:-1",
            "hang:MP:x",
            "fault:",
        ] {
            assert!(parse(&opts(bad)).unwrap_err().contains(bad), "{bad}");
        }
        let b = backend_options(&opts("fault:SB"));
        assert_eq!(b.keys().collect::<Vec<_>>(), ["pack"]);
    }

    #[test]
    fn only_the_named_test_meets_the_injection() {
        let hang = Injection::Hang("MP".into(), Duration::from_millis(50));
        assert_eq!(apply(&hang, "SB"), None);
        match apply(&hang, "MP") {
            Some(RunError::TimedOut(m)) => assert!(m.contains("MP's launches"), "{m}"),
            other => panic!("{other:?}"),
        }
        match apply(&Injection::Fault("SB".into()), "SB") {
            Some(RunError::DeviceError(m)) => assert!(m.contains("ILLEGAL_ADDRESS"), "{m}"),
            other => panic!("{other:?}"),
        }
    }
}
