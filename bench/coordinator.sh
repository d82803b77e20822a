#!/usr/bin/env bash
# What coordinating the copy's slots costs in Redis and in Postgres, in the same run: claims/s and progress saves/s at
# 8 and 32 workers, and the Postgres server's statements/s and WAL bytes/s during each phase; then `rebalance copy`'s
# rows/s coordinated by each, with the source's transactions/s and WAL bytes/s meanwhile.
# Usage: bench/coordinator.sh [slots=2000] [save-seconds=5] [reps=3] [copy-rows=200000] [copy-hours=48] [workers=8]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
slots=${1:-2000}; seconds=${2:-5}; reps=${3:-3}; rows=${4:-200000}; hours=${5:-48}; workers=${6:-8}
source bench/lib.sh
bench_prepare
java -cp "$BENCH_CP" io.rebalance.bench.CoordinatorBenchmark "jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres" \
  "redis://127.0.0.1:6379" "$slots" "$seconds" "$reps" 2> bench/results/coordinator-bench.err \
  | tee bench/results/coordinator-bench.txt
port=8112
bench_dynamodb_local "$port" coordinator
java -cp "$BENCH_CP" io.rebalance.bench.CoordinatedCopyBenchmark "http://127.0.0.1:$port" \
  "jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres" "$rows" "$hours" "$reps" "$workers" bin/rebalance \
  2> bench/results/coordinated-copy-bench.err | tee bench/results/coordinated-copy-bench.txt
