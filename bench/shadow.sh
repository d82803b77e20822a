#!/usr/bin/env bash
# What shadow reads cost the application: reads through Router at a fixed rate from Postgres, in three modes drawn at
# random for each read inside one run (plain: the route, then the read; Router.read at a sample of 0; Router.read at
# a sample of 0.1 with DynamoDB behind a delay proxy), three runs; prints each mode's p50/p99 and DynamoDB reads, then
# the medians and the ratios to plain (goal: p99 within 1.10x at 0.1, and no DynamoDB read at 0).
# Usage: bench/shadow.sh [reads-per-second=400] [seconds=60] [delay-ms=50]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rate=${1:-400}; seconds=${2:-60}; delay=${3:-50}
source bench/lib.sh
bench_prepare
port=8121
bench_dynamodb_local "$port" shadow
java -Xmx2g -cp "$BENCH_CP" io.rebalance.bench.ShadowBenchmark "http://127.0.0.1:$port" \
  "jdbc:postgresql://127.0.0.1:5432/postgres" "redis://127.0.0.1:6379" "$rate" "$seconds" "$delay" \
  2> bench/results/shadow-bench.err | tee bench/results/shadow-bench.txt
