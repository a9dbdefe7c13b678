//! The campaign manifest: the steps of a hardware campaign in the order they run, one a line:
//! `STEP SECONDS KIND ARGS...` (`#` starts a comment). `SECONDS` is the step's expected
//! wall time, which `campaign run` compares with what is left of its budget; `KIND` is `run`
//! (`ptx-litmus run ARGS`, one result set) or `script` (`bash ARGS`, files of its own).

use super::limits::plain_name;
use std::fmt;
use std::path::Path;

/// Longest step name (it names an archive and a result set).
pub const MAX_STEP_NAME: usize = 48;

/// What a step does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `ptx-litmus run` with these arguments (paths and flags).
    Run(Vec<String>),
    /// `bash` with these arguments (a script and its own arguments).
    Script(Vec<String>),
}

/// One step of a campaign.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// Its name: letters, digits, `.`, `_`, `-`.
    pub name: String,
    /// Expected wall-clock seconds.
    pub seconds: u32,
    /// What it runs.
    pub kind: Kind,
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (kind, args) = match &self.kind {
            Kind::Run(a) => ("run", a),
            Kind::Script(a) => ("script", a),
        };
        write!(
            f,
            "{} {} {kind} {}",
            self.name,
            self.seconds,
            args.join(" ")
        )
    }
}

impl Step {
    /// The value of a `run` step's `--compiler` flag (`ptxas:12.4`), if it has one.
    pub fn compiler(&self) -> Option<&str> {
        let Kind::Run(args) = &self.kind else {
            return None;
        };
        let (_, flags) = split_run(args);
        flags
            .iter()
            .enumerate()
            .find_map(|(k, f)| match f.strip_prefix("--compiler") {
                Some("") => flags.get(k + 1).map(String::as_str),
                Some(rest) => rest.strip_prefix('='),
                None => None,
            })
    }
}

/// A `run` step's arguments split into the test paths (those before the first flag) and the
/// flags.
pub fn split_run(args: &[String]) -> (&[String], &[String]) {
    let k = args
        .iter()
        .position(|a| a.starts_with('-'))
        .unwrap_or(args.len());
    args.split_at(k)
}

/// Parses a manifest; errors name `path:line` and the cause.
pub fn parse(text: &str, path: &Path) -> Result<Vec<Step>, String> {
    let mut steps: Vec<Step> = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let at = format!("{}:{}", path.display(), n + 1);
        let step = parse_line(line).map_err(|e| format!("{at}: {e}"))?;
        if steps.iter().any(|s| s.name == step.name) {
            return Err(format!("{at}: step `{}` is named twice", step.name));
        }
        steps.push(step);
    }
    if steps.is_empty() {
        return Err(format!("{}: no steps", path.display()));
    }
    Ok(steps)
}

fn parse_line(line: &str) -> Result<Step, String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let [name, seconds, kind, args @ ..] = words.as_slice() else {
        return Err("expected STEP SECONDS KIND ARGS...".into());
    };
    if !plain_name(name) || name.len() > MAX_STEP_NAME {
        return Err(format!(
            "step name `{name}`: up to {MAX_STEP_NAME} letters, digits, '.', '_', '-'"
        ));
    }
    let seconds = seconds
        .parse::<u32>()
        .ok()
        .filter(|s| (1..=86_400).contains(s))
        .ok_or_else(|| format!("seconds `{seconds}`: expected 1..=86400"))?;
    if args.is_empty() {
        return Err(format!("step `{name}`: {kind} needs arguments"));
    }
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let kind = match *kind {
        "run" => {
            for owned in ["--out", "--run-id", "--backend", "--replay", "--shard"] {
                if args.iter().any(|a| a == owned) {
                    return Err(format!("step `{name}`: {owned} is set by the campaign"));
                }
            }
            if args[0].starts_with('-') {
                return Err(format!(
                    "step `{name}`: run takes the test paths first, then flags"
                ));
            }
            Kind::Run(args)
        }
        "script" => Kind::Script(args),
        other => return Err(format!("kind `{other}`: expected run or script")),
    };
    Ok(Step {
        name: name.to_string(),
        seconds,
        kind,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_parse_in_order_with_comments() {
        let text = "# a campaign\npre 60 script campaign/preflight.sh\n\n\
                    litmus-basic 150 run litmus --stress basic  # the suite\n";
        let s = parse(text, Path::new("m")).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(
            s[0].kind,
            Kind::Script(vec!["campaign/preflight.sh".into()])
        );
        assert_eq!(s[1].seconds, 150);
        assert_eq!(
            s[1].kind,
            Kind::Run(vec!["litmus".into(), "--stress".into(), "basic".into()])
        );
        assert_eq!(
            s[1].to_string(),
            "litmus-basic 150 run litmus --stress basic"
        );
    }

    #[test]
    fn a_run_step_names_its_compiler_in_either_spelling() {
        let text = "a 1 run litmus/mp --time 1 --compiler ptxas:12.4 -o grid=preset\n\
                    b 1 run litmus/mp --compiler=jit\n\
                    c 1 run litmus/mp --time 1\n\
                    d 1 script campaign/bench.sh --compiler x\n";
        let s = parse(text, Path::new("m")).unwrap();
        let names: Vec<Option<&str>> = s.iter().map(Step::compiler).collect();
        assert_eq!(names, [Some("ptxas:12.4"), Some("jit"), None, None]);
    }

    #[test]
    fn bad_lines_are_named_with_their_line() {
        for (text, cause) in [
            ("a 1 run x\na 2 run y\n", "m:2: step `a` is named twice"),
            ("a+b 1 run x\n", "m:1: step name `a+b`"),
            ("a 0 run x\n", "m:1: seconds `0`"),
            ("a 1 build x\n", "m:1: kind `build`"),
            ("a 1 run\n", "m:1: step `a`: run needs arguments"),
            ("a 1\n", "m:1: expected STEP"),
            ("a 1 run litmus --out x\n", "--out is set by the campaign"),
            ("a 1 run --time 1 litmus\n", "the test paths first"),
            ("# nothing\n", "m: no steps"),
        ] {
            let e = parse(text, Path::new("m")).unwrap_err();
            assert!(e.contains(cause), "{text:?}: {e}");
        }
    }
}
