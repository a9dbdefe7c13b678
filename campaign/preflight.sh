#!/usr/bin/env bash
# The campaign's preflight step (about 2 minutes on an H100): what the GPU machine is, one MP
# run under each stress preset, the self-check of the texture and surface objects
# (campaign/proxy-check), compute-sanitizer memcheck on three kernels (MP, IRIW, a cluster
# test), and the SASS of every kernel, from this machine's ptxas and nvdisasm, checked by the
# optcheck (`ptx-litmus sass`), which must pass as it does on the build machine. Run by `campaign run` with STEP_DIR, PTX_LITMUS and CAMPAIGN_BACKEND set; every
# file it writes lands in STEP_DIR, and preflight.txt says what passed. Exit 0 only if every
# check that applies passed.
set -u
out=${STEP_DIR:?STEP_DIR is set by campaign run}
bin=${PTX_LITMUS:?PTX_LITMUS is set by campaign run}
backend=${CAMPAIGN_BACKEND:-cuda}
export PATH="$PATH:/usr/local/cuda/bin"
report="$out/preflight.txt"
failed=0
mp=litmus/mp/MP+rel.gpu+acq.gpu.litmus
iriw=litmus/iriw/IRIW+fence.sc.gpu+fence.sc.gpu-wk.litmus
cluster=litmus/cluster/MP+rel.cluster+acq.cluster-samecluster.litmus

say() { echo "$*" | tee -a "$report"; }
# check NAME SECONDS COMMAND...: runs a check with a time limit, its output in NAME.txt.
check() {
    local name=$1 secs=$2 rc=0
    shift 2
    timeout -k 5 "$secs" "$@" >"$out/$name.txt" 2>&1 || rc=$?
    judge "$name" "$rc"
}
# judge NAME RC: run's exit 0 is conformant, 1 a violation (a finding, kept); else failed.
judge() {
    case $2 in
        0) say "passed  $1 (exit 0)" ;;
        1) say "passed  $1 (exit 1: a violation)" ;;
        *) say "FAILED  $1 (exit $2)"; failed=1 ;;
    esac
}
# memcheck NAME TEST: compute-sanitizer's memcheck of one short run (exit 9: it found an
# error). A device the sanitizer refuses (as on sandboxed machines) is said and skipped, not
# failed: that says nothing of the kernels, and a failed preflight would run again next window.
memcheck() {
    local name=$1 rc=0 refused
    timeout -k 5 90 compute-sanitizer --tool memcheck --error-exitcode 9 \
        "$bin" run "$2" --backend cuda --iterations 1 --seed 1 --quiet \
        --run-id "$name" --out "$out/memcheck" >"$out/$name.txt" 2>&1 || rc=$?
    refused=$(grep -m1 -iE 'device not supported|not supported on this device' "$out/$name.txt")
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 9 ] && [ -n "$refused" ]; then
        say "skipped $name: compute-sanitizer refused the device: $(echo "$refused" | cut -c1-120)"
    else
        judge "$name" "$rc"
    fi
}
have() { command -v "$1" >/dev/null 2>&1; }

say "preflight of $("$bin" campaign machine --backend "$backend" 2>&1) on the $backend backend"
{
    uname -a
    if have nvidia-smi; then
        nvidia-smi --query-gpu=name,driver_version,count,clocks.max.sm,clocks.max.mem,clocks.sm,clocks.mem,memory.total,power.limit --format=csv
        nvidia-smi
    else
        echo "no nvidia-smi"
    fi
    if have ptxas; then ptxas --version; else echo "no ptxas"; fi
    if have nvcc; then nvcc --version; fi
} >"$out/machine.txt" 2>&1
head -n 3 "$out/machine.txt" | tee -a "$report"

for preset in basic interleave stress; do
    check "mp-$preset" 60 "$bin" run "$mp" --backend "$backend" --stress "$preset" --time 1 \
        --seed 1 --quiet --run-id "mp-$preset" --out "$out/mp"
done

# The texture and surface objects (docs/proxies.md): two tests whose model allows one outcome
# each, so here a violation (exit 1) fails, and so does a test refused or not run.
rc=0
timeout -k 5 60 "$bin" run campaign/proxy-check --backend "$backend" --stress basic --time 1 \
    --seed 1 --quiet --run-id proxy-objects --out "$out/proxy" >"$out/proxy-objects.txt" 2>&1 \
    || rc=$?
if [ "$rc" -eq 0 ] && grep -q "2 tests: 0 violations, 2 conformant" "$out/proxy-objects.txt"; then
    say "passed  proxy-objects (exit 0, both conformant)"
else
    say "FAILED  proxy-objects (exit $rc; see proxy-objects.txt)"
    failed=1
fi

if [ "$backend" = cuda ] && have compute-sanitizer; then
    for t in "$mp" "$iriw" "$cluster"; do
        memcheck "memcheck-$(basename "$t" .litmus | tr -c 'A-Za-z0-9._\n-' '-')" "$t"
    done
else
    say "skipped memcheck: needs the cuda backend and compute-sanitizer"
fi

if have ptxas && have nvdisasm; then
    dirs=(litmus)
    [ -d campaign/corpus ] && dirs+=(campaign/corpus)
    check sass-optcheck 240 env PTX_LITMUS_PTXAS="$(command -v ptxas)" \
        PTX_LITMUS_NVDISASM="$(command -v nvdisasm)" "$bin" sass "${dirs[@]}"
    tail -n 2 "$out/sass-optcheck.txt" | tee -a "$report"
else
    say "skipped the SASS check: needs ptxas and nvdisasm on PATH"
fi
exit "$failed"
