//! What ptxas says an entry function uses (`ptxas -v`: registers per thread and static shared
//! memory per CTA), so a launch can be planned without a GPU the way the driver would size it.

use super::tools::{assemble_verbose, Tool, ToolError};

/// Registers and static shared memory of one entry function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryUsage {
    /// Registers per thread.
    pub registers: u32,
    /// Bytes of static shared memory per CTA.
    pub shared_bytes: u32,
}

/// `entry`'s usage in the log of `ptxas -v`: the `Used N registers[, ..., M bytes smem]` line
/// that follows `Compiling entry function 'entry'`.
pub fn parse(log: &str, entry: &str) -> Option<EntryUsage> {
    let header = format!("Compiling entry function '{entry}'");
    let mut lines = log.lines().skip_while(|l| !l.contains(&header)).skip(1);
    let used = lines.find(|l| l.contains("Used ") || l.contains("Compiling entry"))?;
    let used = used.split("Used ").nth(1)?;
    let number_before = |unit: &str| -> Option<u32> {
        let at = used.find(unit)?;
        used[..at]
            .split([' ', ','])
            .rfind(|w| !w.is_empty())?
            .parse()
            .ok()
    };
    Some(EntryUsage {
        registers: number_before(" registers")?,
        shared_bytes: number_before(" bytes smem").unwrap_or(0),
    })
}

/// Assembles `ptx` for `arch` with `ptxas -v` and returns `entry`'s usage.
pub fn entry_usage(ptx: &str, arch: &str, entry: &str) -> Result<EntryUsage, ToolError> {
    let log = assemble_verbose(ptx, arch)?;
    parse(&log, entry).ok_or_else(|| ToolError::Failed {
        tool: Tool::Ptxas,
        log: format!("no register count for {entry} in:\n{log}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'litmus_collect' for 'sm_90'
ptxas info    : Function properties for litmus_collect
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 20 registers, used 0 barriers
ptxas info    : Compiling entry function 'litmus_test' for 'sm_90'
ptxas info    : Function properties for litmus_test
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 25 registers, used 1 barriers, 2048 bytes smem
";

    #[test]
    fn each_entry_gets_its_own_line() {
        assert_eq!(
            parse(LOG, "litmus_test"),
            Some(EntryUsage {
                registers: 25,
                shared_bytes: 2048
            })
        );
        assert_eq!(
            parse(LOG, "litmus_collect"),
            Some(EntryUsage {
                registers: 20,
                shared_bytes: 0
            })
        );
        assert_eq!(parse(LOG, "missing"), None);
        // An entry without its own usage line does not borrow the next entry's.
        let cut = LOG.replace("ptxas info    : Used 20 registers, used 0 barriers\n", "");
        assert_eq!(parse(&cut, "litmus_collect"), None);
    }
}
