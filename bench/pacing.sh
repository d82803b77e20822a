#!/usr/bin/env bash
# Pacing to DynamoDB's write capacity: `processes` `rebalance copy` processes of one run write through the capacity
# model (a table's write units per second, 1,000 per partition, DynamoDB's throttling answers) in front of DynamoDB
# Local; prints the units charged per second against those allowed and the share of write requests throttled.
# Usage: bench/pacing.sh [rows=30000] [hours=24] [reps=3] [processes=3] [units=2000] [workers=4]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rows=${1:-30000}; hours=${2:-24}; reps=${3:-3}; processes=${4:-3}; units=${5:-2000}; workers=${6:-4}
source bench/lib.sh
bench_prepare
port=8114
bench_dynamodb_local "$port" pacing
java -Xmx2g -cp "$BENCH_CP" io.rebalance.bench.PacingBenchmark "http://127.0.0.1:$port" "$rows" "$hours" "$reps" \
  "$processes" "$units" "$workers" bin/rebalance 2> bench/results/pacing-bench.err | tee bench/results/pacing-bench.txt
