#!/usr/bin/env bash
# The tail: events/s draining a backlog vs Debezium alone (no-op handler) vs the raw BatchWriteItem ceiling of
# DynamoDB Local, each repetition on the same backlog (two slots per repetition, made before the changes); then
# commit-to-item latency p50/p99 at a steady write rate, with the probe's own floor (PutItem direct). Medians.
# Usage: bench/tail.sh [changes=500000] [reps=3] [rate=1000] [seconds=30]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
changes=${1:-500000}; reps=${2:-3}; rate=${3:-1000}; seconds=${4:-30}
bash scripts/services.sh
mvn -B -q -DskipTests package
mkdir -p bench/results
mvn -B -q -pl bench dependency:build-classpath -Dmdep.outputFile="$PWD/bench/target/classpath.txt"
cp=$(cat bench/target/classpath.txt)
port=8112
# DynamoDB Local in its own process, as a deployment would share one.
java -Xmx6g -jar cli/target/rebalance.jar dynamodb-local --port "$port" > bench/results/dynamodb-local-tail.log 2>&1 &
ddb=$!
trap 'kill $ddb 2>/dev/null || true' EXIT
for _ in $(seq 1 60); do grep -q "serves" bench/results/dynamodb-local-tail.log 2>/dev/null && break; sleep 0.5; done
java -Xmx6g -cp "bench/target/classes:$cp" io.rebalance.bench.TailBenchmark "http://127.0.0.1:$port" "$changes" "$reps" \
  "$rate" "$seconds" 2> bench/results/tail-bench.err | tee bench/results/tail-bench.txt
