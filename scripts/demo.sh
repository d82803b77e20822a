#!/usr/bin/env bash
# A realistic demo migration end to end on local defaults: generates a room_events table in Postgres and moves it
# into DynamoDB Local (in-process), with state in Redis, then cuts over, rolls back, cuts over again and closes the
# window while an application writes through WriteGuard and reads through Router. Builds the jars first if needed.
# Extra arguments go to `rebalance-demo demo` (for example --rows 1000000 --hours 240).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/services.sh
[[ -f demo/target/rebalance-demo.jar && -f cli/target/rebalance.jar ]] || mvn -B -q -DskipTests -Djib.skip package # the image is not needed here
exec bin/rebalance-demo demo "$@"
