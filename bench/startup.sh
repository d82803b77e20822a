#!/usr/bin/env bash
# A command's start: wall time of `bin/rebalance --help` and of `bin/rebalance status`, median of 5 each, now and as
# it was at a baseline revision (default 05ec2e2: before the class data sharing archive, the first JIT tier for
# short commands and picocli without Micronaut's context), both measured in this run, and the ratio.
#   bench/startup.sh [BASELINE_REV]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
base_rev="${1:-05ec2e2}"
bench_prepare
base="$(mktemp -d)"
trap 'git worktree remove --force "$base/tree" >/dev/null 2>&1 || true; rm -rf "$base"' EXIT
git worktree add -q --detach "$base/tree" "$base_rev"
(cd "$base/tree" && mvn -B -q -o -DskipTests package -pl cli -am > "$base/build.log" 2>&1) \
  || { echo "bench: the baseline $base_rev did not build; see $base/build.log" >&2; exit 1; }
base_jar="$base/tree/cli/target/rebalance.jar"

# status reads Redis and Postgres: the run under a prefix no one uses (nothing is written)
status_args=(status --set "redis.prefix=bench-startup-$$:" --set "source.table=bench_startup_none")

median5() { # a command; prints its median wall time in ms over 5 runs
  local times=()
  for _ in 1 2 3 4 5; do
    local s e
    s=$(date +%s%N); "$@" > /dev/null 2>&1 || true; e=$(date +%s%N)
    times+=($(( (e - s) / 1000000 )))
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n 3p
}

# the baseline as its bin/rebalance ran it
before_help=$(median5 java -XX:+UseParallelGC -Xmx2g -jar "$base_jar" --help)
after_help=$(median5 bin/rebalance --help)
before_status=$(median5 java -XX:+UseParallelGC -Xmx2g -jar "$base_jar" "${status_args[@]}")
after_status=$(median5 bin/rebalance "${status_args[@]}")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
printf 'startup (median of 5, ms)   baseline %s   now   ratio\n' "$base_rev"
printf '  --help                    %8s %7s   %s\n' "$before_help" "$after_help" "$(ratio "$after_help" "$before_help")"
printf '  status                    %8s %7s   %s\n' "$before_status" "$after_status" "$(ratio "$after_status" "$before_status")"
