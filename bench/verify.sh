#!/usr/bin/env bash
# Verification cost: bytes and time of the server-side Postgres fingerprint vs fetching the rows (naive), and the
# verifier's DynamoDB items/s vs the raw Query ceiling of DynamoDB Local, on the same generated rows in one run.
# Usage: bench/verify.sh [rows=1000000] [hours=240] [reps=3] [threads=4]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rows=${1:-1000000}; hours=${2:-240}; reps=${3:-3}; threads=${4:-4}
bash scripts/services.sh
mvn -B -q -DskipTests package
mkdir -p bench/results
mvn -B -q -pl bench dependency:build-classpath -Dmdep.outputFile="$PWD/bench/target/classpath.txt"
cp=$(cat bench/target/classpath.txt)
port=8112
# DynamoDB Local in its own process, as in bench/copy.sh
java -Xmx6g -jar cli/target/rebalance.jar dynamodb-local --port "$port" > bench/results/dynamodb-local-verify.log 2>&1 &
ddb=$!
trap 'kill $ddb 2>/dev/null || true' EXIT
for _ in $(seq 1 60); do grep -q "serves" bench/results/dynamodb-local-verify.log 2>/dev/null && break; sleep 0.5; done
java -Xmx6g -cp "bench/target/classes:$cp" io.rebalance.bench.VerifyBenchmark "http://127.0.0.1:$port" "$rows" "$hours" \
  "$reps" "$threads" 2> bench/results/verify-bench.err | tee bench/results/verify-bench.txt
