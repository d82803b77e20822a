# Sourced by the bench scripts: services up, one build, the benchmarks' classpath (written by bench's own
# package phase, so nothing needs installing), and DynamoDB Local in its own process, as a deployment shares one.

bench_prepare() {
  bash scripts/services.sh
  mvn -B -q -DskipTests package
  mkdir -p bench/results
  BENCH_CP="bench/target/classes:$(cat bench/target/classpath.txt)"
}

# bench_dynamodb_local PORT NAME: starts it, stops it when the script exits, and fails if it does not come up.
bench_dynamodb_local() {
  local port=$1 log="bench/results/dynamodb-local-$2.log"
  java -Xmx6g -jar demo/target/rebalance-demo.jar dynamodb-local --port "$port" > "$log" 2>&1 &
  BENCH_DDB=$!
  trap 'kill $BENCH_DDB 2>/dev/null || true' EXIT
  for _ in $(seq 1 120); do
    grep -q "serves" "$log" 2>/dev/null && return 0
    kill -0 "$BENCH_DDB" 2>/dev/null || break
    sleep 0.5 # DynamoDB Local is starting; it prints "serves" when it listens
  done
  echo "bench: DynamoDB Local did not start on port $port; see $log" >&2
  exit 1
}
