#!/usr/bin/env bash
# What coordinating the copy's slots costs in Redis and in Postgres, in the same run: claims/s and progress saves/s at
# 8 and 32 workers, and the Postgres server's statements/s and WAL bytes/s during each phase.
# Usage: bench/coordinator.sh [slots=2000] [save-seconds=5] [reps=3]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
slots=${1:-2000}; seconds=${2:-5}; reps=${3:-3}
source bench/lib.sh
bench_prepare
java -cp "$BENCH_CP" io.rebalance.bench.CoordinatorBenchmark "jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres" \
  "redis://127.0.0.1:6379" "$slots" "$seconds" "$reps" 2> bench/results/coordinator-bench.err \
  | tee bench/results/coordinator-bench.txt
