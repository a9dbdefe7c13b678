#!/usr/bin/env bash
# A whole GPU window in one device call: the smoke (campaign/smoke.sh, about a minute), then,
# if it passed, `campaign run` for what is left of the call's time. One call instead of two
# leaves no idle gap between them in which the warm machine could be given back, and no second
# start to pay.
#
#   campaign/window.sh LIMIT [BINARY [CAMPAIGN-RUN-FLAGS...]]
#     LIMIT    the device call's limit in seconds (its timeout_s, or less budget_left_s)
#     BINARY   target/device/ptx-litmus unless given
#   WINDOW_BACKEND=cpu    the CPU backend instead (how tests/campaign.rs runs it)
#
# The campaign's budget is LIMIT less the smoke's time and 30 s (the campaign keeps 15 s of its
# budget for packing, and stops a step at the budget's end), so that the summary is written
# before the call is killed; with less than 120 s left it does not start. What
# comes back, 8 files at most: $OUT/smoke.txt and $OUT/smoke.tar.gz, and under
# $OUT/campaign/ the steps' archives and summary.txt (`--files 6`). Exit code: the smoke's when
# it failed, 3 when no time was left, else the campaign's.
#
# Back on the build machine: `tar -xzf FILES_AT/smoke.tar.gz -C results/` and
# `ptx-litmus campaign unpack FILES_AT/campaign/*.tar*`.
set -u
out=${OUT:?OUT names the folder whose files come back}
limit=${1:?LIMIT: the device call limit in seconds}
bin=${2:-target/device/ptx-litmus}
backend=${WINDOW_BACKEND:-cuda}
case $limit in
    '' | *[!0-9]*) echo "window: LIMIT must be whole seconds, not '$limit'" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
start=$SECONDS

SMOKE_BACKEND=$backend bash campaign/smoke.sh "$bin"
rc=$?
if [ "$rc" != 0 ]; then
    echo "window: the smoke failed (exit $rc), so no campaign ran"
    exit "$rc"
fi
budget=$((limit - (SECONDS - start) - 30))
if [ "$budget" -lt 120 ]; then
    echo "window: ${budget} s left for the campaign, under 120 s: not started"
    exit 3
fi
echo "== campaign run --budget ${budget}s"
exec "$bin" campaign run --budget "${budget}s" --out "$out/campaign" --files 6 \
    --backend "$backend" "${@:3}"
