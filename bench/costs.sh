#!/usr/bin/env bash
# What a unit of work costs, each figure beside its baseline (docs/capacity.md derives its figures from these): per
# 1,000 rows copied, the copy processes' CPU (against a raw SDK loop), Redis commands (and per slot), Postgres
# statements and CPU, WAL; N = 1, 2, 4, 8 copy processes coordinated by one Redis, by a 3-primary Redis Cluster on
# loopback ports, and by Postgres; WAL per application write (per hour at a rate); verify's source CPU per 1,000 rows
# (against one md5 of every row). Medians of the repetitions.
# Usage: bench/costs.sh [rows=30000] [hours=24] [reps=3] [writes-per-second=200]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rows=${1:-30000}; hours=${2:-24}; reps=${3:-3}; writes=${4:-200}
source bench/lib.sh
bench_prepare
bench_statement_stats
port=8114
bench_dynamodb_local "$port" costs
java -cp "$BENCH_CP" io.rebalance.bench.CostsBenchmark "http://127.0.0.1:$port" "$rows" "$hours" "$reps" "$writes" \
  bin/rebalance 2> bench/results/costs-bench.err | tee bench/results/costs-bench.txt
