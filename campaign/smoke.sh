#!/usr/bin/env bash
# The first part of a GPU window (campaign/window.sh runs it before the campaign), about a
# minute: what the machine is (GPU, driver, CUDA, ptxas, glibc), whether the carried binary
# starts and opens the GPU, then MP with relaxed and with release/acquire accesses for one
# second under each stress preset. Everything it
# prints is also written to $OUT/smoke.txt, and the three result sets to $OUT/smoke.tar.gz
# (two plain names: what a device call brings back). Every command has a time limit, so the
# script ends within about three minutes whatever the machine does. Exit 0 only if the binary
# ran all three presets.
#
#   campaign/smoke.sh [BINARY]     BINARY: target/device/ptx-litmus unless given
#   SMOKE_BACKEND=cpu              the CPU backend instead (how tests/campaign.rs runs it)
#
# Back on the build machine: `tar -xzf FILES_AT/smoke.tar.gz -C results/` puts the result sets
# under results/<machine>/smoke-<preset>/ (`ptx-litmus report` renders each).
set -u
out=${OUT:?OUT names the folder whose files come back}
bin=${1:-target/device/ptx-litmus}
backend=${SMOKE_BACKEND:-cuda}
cd "$(dirname "$0")/.."
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/ptx-litmus-smoke.XXXXXX")
mkdir -p "$work/results"
export PATH="$PATH:/usr/local/cuda/bin"
tests=(litmus/mp/MP+rlx.gpu+rlx.gpu.litmus litmus/mp/MP+rel.gpu+acq.gpu.litmus)

have() { command -v "$1" >/dev/null 2>&1; }
# limited SECONDS COMMAND...: the command, stopped after SECONDS (then killed 5 s later).
limited() {
    local secs=$1
    shift
    timeout -k 5 "$secs" "$@"
}

smoke() {
    echo "== machine ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
    uname -srm
    echo "glibc $(getconf GNU_LIBC_VERSION 2>/dev/null || echo unknown)" \
        "(the binary needs 2.34 or newer)"
    if have nvidia-smi; then
        limited 30 nvidia-smi --query-gpu=name,driver_version,pci.bus_id,clocks.max.sm,clocks.max.mem,memory.total,power.limit --format=csv
        limited 30 nvidia-smi | grep -m1 'CUDA Version'
    else
        echo "no nvidia-smi"
    fi
    if have ldconfig; then
        ldconfig -p 2>/dev/null | grep -m3 'libcuda\.so' || echo "ldconfig knows no libcuda.so"
    fi
    for tool in ptxas nvcc nvdisasm cuobjdump compute-sanitizer; do
        if have "$tool"; then
            echo "$tool: $(limited 30 "$tool" --version 2>&1 | grep -m1 -iE 'release|version [0-9]')"
        else
            echo "$tool: not found"
        fi
    done

    echo "== binary"
    if ! limited 20 "$bin" --version; then
        echo "FAILED: $bin does not run here (see above: a missing file, or a glibc too old)"
        return 2
    fi
    local machine rc=0 passed=0
    machine=$(limited 60 "$bin" campaign machine --backend "$backend" 2>&1) || rc=$?
    echo "machine: $machine (exit $rc)"
    [ "$rc" = 0 ] || echo "FAILED: the $backend backend cannot run here; the runs below say why too"

    for preset in basic interleave stress; do
        echo "== run ${tests[*]} --stress $preset --time 1"
        rc=0
        limited 40 "$bin" run "${tests[@]}" --backend "$backend" --stress "$preset" --time 1 \
            --seed 1 --run-id "smoke-$preset" --results "$work/results" || rc=$?
        # run: 0 conformant, 1 a violation (a finding, kept); anything else failed.
        case $rc in
            0 | 1) passed=$((passed + 1)); echo "passed (exit $rc)" ;;
            *) echo "FAILED (exit $rc)" ;;
        esac
    done
    echo "== smoke: $passed of 3 presets ran"
    [ "$passed" = 3 ]
}

smoke 2>&1 | tee "$out/smoke.txt"
status=${PIPESTATUS[0]}
if tar -czf "$out/smoke.tar.gz" -C "$work/results" .; then
    echo "packed: $(tar -tzf "$out/smoke.tar.gz" | grep -c '/run\.json$') result set(s)," \
        "$(wc -c <"$out/smoke.tar.gz") bytes" | tee -a "$out/smoke.txt"
else
    echo "FAILED to pack $work/results" | tee -a "$out/smoke.txt"
    status=2
fi
rm -rf "$work"
exit "$status"
