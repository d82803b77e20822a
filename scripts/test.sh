#!/usr/bin/env bash
# The whole test suite: unit tests (*Test) and integration tests (*IT) against real Postgres, Redis and
# DynamoDB Local, plus the formatter check. Services are prepared first (idempotent).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/services.sh
exec mvn -B verify "$@"
