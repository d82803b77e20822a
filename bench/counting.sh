#!/usr/bin/env bash
# What counting for the metrics costs the copy per row, against encoding one row in the same run (JMH; one fork,
# 3 warm-up and 5 measured iterations of 2 s per benchmark). Usage: bench/counting.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
bench_prepare
java -cp "$BENCH_CP" io.rebalance.bench.CountingBenchmark 2> bench/results/counting.err | tee bench/results/counting.txt
