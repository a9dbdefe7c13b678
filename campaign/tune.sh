#!/usr/bin/env bash
# The campaign's tune step: `ptx-litmus tune` over the bench shapes (SB, MP, LB, 2+2W, WRC,
# IRIW), one tuned file per shape family with its search record and page, into
# STEP_DIR/tuned/ (docs/tune.md). Run by `campaign run` with STEP_DIR, PTX_LITMUS and
# CAMPAIGN_BACKEND set. TUNE_SECONDS is the search's budget: 400 s on the GPU, which with the
# start-up leaves the step within its 450 s; 20 s on the CPU (tests of the campaign itself).
set -u
out=${STEP_DIR:?STEP_DIR is set by campaign run}
bin=${PTX_LITMUS:?PTX_LITMUS is set by campaign run}
backend=${CAMPAIGN_BACKEND:-cuda}
secs=400
[ "$backend" = cpu ] && secs=20
secs=${TUNE_SECONDS:-$secs}
# From the step's folder, so that tune.txt names the files it wrote as they lie beside it.
cd "$out" || exit 2
timeout -k 5 $((secs + 40)) "$bin" tune --backend "$backend" --seed 1 --budget "$secs" \
    --out tuned 2>&1 | tee tune.txt
exit "${PIPESTATUS[0]}"
