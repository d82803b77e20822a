#!/usr/bin/env bash
# A realistic demo migration end to end on local defaults: generates a room_events table in Postgres and moves it
# into DynamoDB Local (in-process), with state in Redis. Builds the jar first if needed. Extra arguments go to
# `rebalance demo` (for example --rows 1000000 --hours 240).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/services.sh
[[ -f cli/target/rebalance.jar ]] || mvn -B -q -DskipTests package
exec bin/rebalance demo "$@"
