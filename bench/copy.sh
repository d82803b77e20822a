#!/usr/bin/env bash
# Copy throughput: naive single loop vs `rebalance copy` (one process, 512 MB heap) vs the raw BatchWriteItem
# ceiling of DynamoDB Local, on the same generated rows, in one run; prints medians and the ratios.
# Usage: bench/copy.sh [rows=1000000] [hours=240] [reps=3] [workers=8]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rows=${1:-1000000}; hours=${2:-240}; reps=${3:-3}; workers=${4:-8}
bash scripts/services.sh
mvn -B -q -DskipTests package
mkdir -p bench/results
mvn -B -q -pl bench dependency:build-classpath -Dmdep.outputFile="$PWD/bench/target/classpath.txt"
cp=$(cat bench/target/classpath.txt)
port=8111
# DynamoDB Local in its own process, as a deployment would share one: the copy process keeps its 512 MB heap.
java -Xmx6g -jar cli/target/rebalance.jar dynamodb-local --port "$port" > bench/results/dynamodb-local.log 2>&1 &
ddb=$!
trap 'kill $ddb 2>/dev/null || true' EXIT
for _ in $(seq 1 60); do grep -q "serves" bench/results/dynamodb-local.log 2>/dev/null && break; sleep 0.5; done
java -Xmx6g -cp "bench/target/classes:$cp" io.rebalance.bench.CopyBenchmark "http://127.0.0.1:$port" "$rows" "$hours" "$reps" "$workers" \
  bin/rebalance 2> bench/results/copy-bench.err | tee bench/results/copy-bench.txt
