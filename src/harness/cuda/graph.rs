//! A CUDA graph of k launches (test kernel, collect kernel, k times), captured once from the
//! run's stream with the test's constant arguments and replayed with one `cuGraphLaunch`.
//! Kernels captured from one stream keep their order in the graph, and a replay is ordered on
//! the stream like any launch, so the device's launch index advances exactly as with direct
//! launches. The graph and its executable are destroyed on every way out.

use super::driver::{check, usable};
use super::launch::{Args, Launcher};
use cudarc::driver::sys;

/// An instantiated graph of launches.
pub struct Graph {
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
}

impl Graph {
    /// Captures `launches` launches of `test` then `collect` with `args` on `stream` and
    /// instantiates them. On an error the stream is left out of capture mode and whatever was
    /// made is destroyed; the caller then launches directly.
    pub fn capture(
        stream: sys::CUstream,
        launches: u32,
        test: &Launcher,
        collect: &Launcher,
        args: &Args,
    ) -> Result<Graph, String> {
        let mode = sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
        // SAFETY: a live stream of the current context, not being captured.
        check(
            unsafe { sys::cuStreamBeginCapture_v2(stream, mode) },
            "cuStreamBeginCapture",
        )?;
        let mut recorded = Ok(());
        for _ in 0..launches {
            recorded = test.launch(args).and_then(|()| collect.launch(args));
            if recorded.is_err() {
                break;
            }
        }
        let mut g = Graph {
            graph: std::ptr::null_mut(),
            exec: std::ptr::null_mut(),
        };
        // SAFETY: the stream is capturing (begun above); valid out-pointer. Capture is always
        // ended, so the stream takes direct launches again whatever happened.
        let ended = check(
            unsafe { sys::cuStreamEndCapture(stream, &mut g.graph) },
            "cuStreamEndCapture",
        );
        recorded?;
        ended?;
        // SAFETY: valid out-pointer; `g.graph` is the graph just captured.
        check(
            unsafe { sys::cuGraphInstantiateWithFlags(&mut g.exec, g.graph, 0) },
            "cuGraphInstantiateWithFlags",
        )?;
        Ok(g)
    }

    /// Enqueues one replay of the graph on `stream`; returns at once.
    pub fn launch(&self, stream: sys::CUstream) -> Result<(), String> {
        // SAFETY: `exec` is an instantiated graph owned by `self`; a live stream.
        check(
            unsafe { sys::cuGraphLaunch(self.exec, stream) },
            "cuGraphLaunch",
        )
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        if !usable() {
            return;
        }
        // SAFETY: each handle was made by `capture` and is destroyed once; an executable still
        // running is freed by the driver when it completes.
        unsafe {
            if !self.exec.is_null() {
                sys::cuGraphExecDestroy(self.exec);
            }
            if !self.graph.is_null() {
                sys::cuGraphDestroy(self.graph);
            }
        }
    }
}
