//! Commands run on a terminal: util-linux's `script` gives `ptx-litmus` one, so the tests see
//! what a user's terminal shows (progress bars drawn on stderr, and their redraws).

use super::{root, text};
use std::process::Command;

/// What a terminal shows of `ptx-litmus ARGS` run in one (stdout and stderr together), or
/// `None`, said on stderr, where `script` is missing. The command must succeed.
pub fn on_a_terminal(args: &str) -> Option<String> {
    let (ok, screen) = on_a_terminal_ending(args, &[])?;
    assert!(ok, "{args}: {screen}");
    Some(screen)
}

/// [`on_a_terminal`] for a command that may fail, with `env` set: whether it succeeded, and
/// the screen.
pub fn on_a_terminal_ending(args: &str, env: &[(&str, &str)]) -> Option<(bool, String)> {
    let cmd = format!("'{}' {args}", env!("CARGO_BIN_EXE_ptx-litmus"));
    let out = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .envs(env.iter().copied())
        .current_dir(root())
        .output();
    match out {
        Ok(out) => Some((out.status.success(), text(&out.stdout))),
        Err(e) => {
            super::not_checked(&format!("no terminal to run `{cmd}` in (`script`: {e})"));
            None
        }
    }
}

/// The pieces a terminal draws one over the other: lines, and the redraws within a line.
pub fn pieces(screen: &str) -> Vec<&str> {
    screen.split(['\n', '\r']).collect()
}
