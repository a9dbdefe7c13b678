//! A campaign step's process, watched: it ends by itself, or is stopped at its deadline (or
//! when the campaign is stopped) with SIGTERM, which a `run` answers by keeping what it
//! counted, and SIGKILL if it has not ended 10 s later.

use super::interrupt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long a stopped process may take to finish its result set before it is killed.
const GRACE: Duration = Duration::from_secs(10);

/// How a step's process ended.
#[derive(Clone, Copy, Debug)]
pub struct Ended {
    /// Its exit code (`None` when a signal ended it).
    pub code: Option<i32>,
    /// Whether the campaign stopped it (deadline or stop signal).
    pub stopped: bool,
}

/// Runs `cmd` with its output appended to `log`, until it ends or `deadline` passes.
pub fn supervise(mut cmd: Command, deadline: Instant, log: &Path) -> Result<Ended, String> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| format!("{}: {e}", log.display()))?;
    let err = file
        .try_clone()
        .map_err(|e| format!("{}: {e}", log.display()))?;
    let mut child = cmd
        .stdout(file)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot start {cmd:?}: {e}"))?;
    let mut term_sent: Option<Instant> = None;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                return Ok(Ended {
                    code: status.code(),
                    stopped: term_sent.is_some(),
                })
            }
            Ok(None) => {}
            Err(e) => return Err(format!("waiting for {cmd:?}: {e}")),
        }
        let now = Instant::now();
        match term_sent {
            None if now >= deadline || interrupt::requested() => {
                terminate(child.id());
                term_sent = Some(now);
            }
            Some(t) if now.duration_since(t) > GRACE => {
                let _ = child.kill();
            }
            _ => {}
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Sends SIGTERM to process `pid` through the shell's own `kill`: the project binds no
/// signal-sending function, and a minimal image (a GPU machine's container) may lack the
/// `kill` program, while every `sh` has `kill` built in.
fn terminate(pid: u32) {
    // Quiet: the process may have ended since it was last polled.
    let _ = Command::new("sh")
        .args(["-c", "kill -TERM \"$1\"", "sh", &pid.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}
