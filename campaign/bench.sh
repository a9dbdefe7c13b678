#!/usr/bin/env bash
# The campaign's bench step: `bench gpu` (instances/s, weak/s, GPU and host time per launch,
# occupancy and the share of the bandwidth bound of every shape: 2-, 3-, 4-thread, shared
# memory, a cluster) under each stress preset, into STEP_DIR/bench-PRESET.txt; then `basic`
# again with direct launches (-o graph=off) into bench-direct.txt, the host time per launch
# without CUDA graphs beside the default's.
# Run by `campaign run` with STEP_DIR, PTX_LITMUS and CAMPAIGN_BACKEND set (the CPU backend
# runs `bench cpu` instead, for tests of the campaign itself).
set -u
out=${STEP_DIR:?STEP_DIR is set by campaign run}
bin=${PTX_LITMUS:?PTX_LITMUS is set by campaign run}
target=gpu
[ "${CAMPAIGN_BACKEND:-cuda}" = cpu ] && target=cpu
secs=${BENCH_SECONDS:-1}
failed=0
for preset in basic interleave stress; do
    args=(bench "$target" --time "$secs")
    [ "$target" = gpu ] && args+=(--stress "$preset")
    timeout -k 5 60 "$bin" "${args[@]}" >"$out/bench-$preset.txt" 2>&1 || failed=1
    cat "$out/bench-$preset.txt"
    [ "$target" = cpu ] && break
done
if [ "$target" = gpu ]; then
    timeout -k 5 60 "$bin" bench gpu --time "$secs" --stress basic -o graph=off \
        >"$out/bench-direct.txt" 2>&1 || failed=1
    cat "$out/bench-direct.txt"
fi
exit "$failed"
