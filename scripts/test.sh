#!/usr/bin/env bash
# The whole test suite: unit tests (*Test) and integration tests (*IT) against real Postgres, Redis and
# DynamoDB Local, plus the formatter check. Services are prepared first, and Chromium for the dashboard's browser
# test installed (both idempotent).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/services.sh
bash scripts/chromium.sh
exec mvn -B verify "$@"
