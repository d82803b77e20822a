#!/usr/bin/env bash
# Installs Debian's Chromium for the dashboard's browser test (docs/operations.md#dashboard). Idempotent: does
# nothing when /usr/bin/chromium is there. Needs root (or sudo) and the Debian package mirror.
set -euo pipefail
say() { printf 'chromium: %s\n' "$*"; }
as_root() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }
if command -v chromium >/dev/null 2>&1; then
  say "$(chromium --version 2>/dev/null || echo present)"
  exit 0
fi
say "installing Debian's chromium"
export DEBIAN_FRONTEND=noninteractive
as_root apt-get update -qq >/dev/null || say "apt-get update failed; trying the cached package lists"
as_root apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
say "$(chromium --version)"
