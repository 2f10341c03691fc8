#!/usr/bin/env bash
# Instructions per call of one function in a Google Benchmark, load-independent: callgrind counts the function's
# instructions (inclusive) over two runs of different lengths, and the difference over the difference in calls
# drops what the first call does once (a tick's first call records the timeline program).
# Usage: .ci/callgrind_steady.sh BENCH_BINARY FILTER [FUNCTION]
#   FUNCTION defaults to evaluate(plan, config), the GUI's tick.
#   .ci/callgrind_steady.sh build/release/tests/bench_import TickPlanConfig/mistral7b
set -euo pipefail
bench=$1 filter=$2
fn=${3:-'headroom::evaluate(headroom::EnginePlan const&, headroom::Config const&)'}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() { # min_time -> "instructions calls"
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "--toggle-collect=$fn" "$bench" \
        --benchmark_filter="$filter" --benchmark_min_time="$1" > /dev/null 2> "$tmp/err"
    local total id calls
    total=$(grep -o 'Collected : [0-9]*' "$tmp/err" | grep -o '[0-9]*$')
    id=$(grep -m1 -F "$fn" "$tmp/cg" | grep -o '([0-9]*)' | head -1)
    calls=$(grep -A1 "^cfn=$id" "$tmp/cg" | grep '^calls=' | sed 's/calls=\([0-9]*\).*/\1/' | paste -sd+ | bc)
    echo "$total $calls"
}
read -r t1 c1 < <(run 0.3)
read -r t2 c2 < <(run 2)
if [ "$c2" -le "$c1" ]; then
    echo "callgrind_steady: the longer run made no more calls ($c1, $c2)" >&2
    exit 1
fi
echo "$filter: $(( (t2 - t1) / (c2 - c1) )) instructions a call ($t1 over $c1 calls, $t2 over $c2)"
