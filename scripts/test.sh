#!/usr/bin/env bash
# The whole test suite: unit tests (*Test) and integration tests (*IT) against real Postgres, Redis and
# DynamoDB Local, plus the formatter check. Services are prepared first, Chromium for the dashboard's browser test
# installed and promtool for the alert rules' tests (all idempotent).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/services.sh
bash scripts/chromium.sh
bash scripts/promtool.sh
exec mvn -B verify "$@"
