#!/usr/bin/env bash
# What a whole `rebalance verify --all` costs the source, measured from outside (the CPU of every Postgres process,
# from /proc), against one md5 of every row and against the fingerprint queries alone; `verify --slot` over a day and
# the cutover's verification beside them; with a breakdown of verify --all by statement (pg_stat_statements, which
# this script loads into Postgres once). Medians of the runs.
# Usage: bench/verify-all.sh [rows=1000000] [hours=240] [reps=3] [threads=4]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rows=${1:-1000000}; hours=${2:-240}; reps=${3:-3}; threads=${4:-4}
source bench/lib.sh
bench_prepare
bench_statement_stats
port=8113
bench_dynamodb_local "$port" verify-all
java -Xmx6g -cp "$BENCH_CP" io.rebalance.bench.VerifyAllBenchmark "http://127.0.0.1:$port" "$rows" "$hours" \
  "$reps" "$threads" bin/rebalance 2> bench/results/verify-all-bench.err | tee bench/results/verify-all-bench.txt
