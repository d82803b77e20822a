#!/usr/bin/env bash
# Verification cost: bytes and time of the server-side Postgres fingerprint vs fetching the rows (naive), and the
# verifier's DynamoDB items/s vs the raw Query ceiling of DynamoDB Local, on the same generated rows in one run.
# The same rows keyed by random uuids (key ranges, slots.timeFrom: none) against time-ordered ids, copied and
# verified in one run: bench/key-ranges.sh.
# Usage: bench/verify.sh [rows=1000000] [hours=240] [reps=3] [threads=4]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rows=${1:-1000000}; hours=${2:-240}; reps=${3:-3}; threads=${4:-4}
source bench/lib.sh
bench_prepare
port=8112
bench_dynamodb_local "$port" verify
java -Xmx6g -cp "$BENCH_CP" io.rebalance.bench.VerifyBenchmark "http://127.0.0.1:$port" "$rows" "$hours" \
  "$reps" "$threads" 2> bench/results/verify-bench.err | tee bench/results/verify-bench.txt
