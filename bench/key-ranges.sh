#!/usr/bin/env bash
# Key ranges against hours: the same rows keyed by time-ordered ids (hourly slots) and by random uuids
# (slots.timeFrom: none), each copied by `rebalance copy` and verified by `rebalance verify --all`, in one run, the
# order alternating; prints medians and the ratios uuid / time (goal >= 0.9x for both). rowsPerSlot: the key ranges'
# size: the product's default 0 (100,000 rows, fewer so that a table has 64 ranges), a number, or `hour` for as many
# ranges as the time-keyed table has hours.
# Usage: bench/key-ranges.sh [rows=1000000] [hours=240] [reps=3] [workers=8] [rowsPerSlot=0]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rows=${1:-1000000}; hours=${2:-240}; reps=${3:-3}; workers=${4:-8}; perSlot=${5:-0}
source bench/lib.sh
bench_prepare
port=8119
bench_dynamodb_local "$port" key-ranges
java -Xmx2g -cp "$BENCH_CP" io.rebalance.bench.KeyRangesBenchmark "http://127.0.0.1:$port" "$rows" "$hours" "$reps" \
  "$workers" bin/rebalance "$perSlot" 2> bench/results/key-ranges-bench.err | tee bench/results/key-ranges-bench.txt
