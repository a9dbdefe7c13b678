//! Embeds the git revision and build profile for the provenance of every result; never fails.

use std::process::Command;

fn main() {
    let revision = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".to_string());
    let dirty = Command::new("git")
        // No optional locks: a `git status` that refreshed the index would make cargo see the
        // index change and run this script again on the next build.
        .args([
            "--no-optional-locks",
            "status",
            "--porcelain",
            "--untracked-files=no",
        ])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| !o.stdout.is_empty())
        .unwrap_or(false);
    let revision = if dirty && revision != "unknown" {
        format!("{revision}-dirty")
    } else {
        revision
    };
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let rustc_version = Command::new(rustc)
        .arg("-V")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=PTX_LITMUS_RUSTC_VERSION={rustc_version}");
    let profile = std::env::var("PROFILE").unwrap_or_else(|_| "unknown".to_string());
    println!("cargo:rustc-env=PTX_LITMUS_GIT_REVISION={revision}");
    println!("cargo:rustc-env=PTX_LITMUS_BUILD_PROFILE={profile}");
    // Rerun when HEAD moves or the index changes. Only paths that exist are named: cargo
    // reruns a script on every build while a named path is missing (a worktree, whose `.git`
    // is a file, or a copy without git).
    let git_dir = Command::new("git")
        .args(["rev-parse", "--git-dir"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| std::path::PathBuf::from(s.trim()));
    for name in ["HEAD", "index"] {
        if let Some(p) = git_dir
            .as_ref()
            .map(|d| d.join(name))
            .filter(|p| p.exists())
        {
            println!("cargo:rerun-if-changed={}", p.display());
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
