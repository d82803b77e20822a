# Sourced by the bench scripts: services up, one build, the benchmarks' classpath (written by bench's own
# package phase, so nothing needs installing), and DynamoDB Local in its own process, as a deployment shares one.

bench_prepare() {
  bash scripts/services.sh
  mvn -B -q -DskipTests -Djib.skip package # the benchmarks run the jars, not the image
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

# bench_statement_stats: pg_stat_statements loaded into Postgres (shared_preload_libraries, then a restart), for a
# breakdown of a command's source cost by statement. Idempotent; it stays loaded (it costs a little per statement).
bench_statement_stats() {
  local loaded
  loaded=$(psql -h 127.0.0.1 -U postgres -qAtX -c 'SHOW shared_preload_libraries')
  [[ "$loaded" == *pg_stat_statements* ]] && return 0
  echo "bench: loading pg_stat_statements into Postgres (shared_preload_libraries; restarts it once)"
  psql -h 127.0.0.1 -U postgres -qAtX -c "ALTER SYSTEM SET shared_preload_libraries = '${loaded:+$loaded,}pg_stat_statements'"
  local version
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  if [[ $(id -u) -eq 0 ]]; then pg_ctlcluster --skip-systemctl-redirect "$version" main restart
  else sudo pg_ctlcluster --skip-systemctl-redirect "$version" main restart; fi
  for _ in $(seq 1 60); do pg_isready -h 127.0.0.1 -p 5432 -q && return 0; sleep 0.5; done
  echo "bench: Postgres did not come back after loading pg_stat_statements" >&2
  exit 1
}
