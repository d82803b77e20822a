#!/usr/bin/env bash
# Puts Prometheus' promtool on the PATH for the alert rules' tests (deploy's AlertRulesTest), from Debian's
# `prometheus` package: only the tool is taken out of the package (installing the package would start a Prometheus
# server). Idempotent: does nothing when promtool is there. Needs root (or sudo) and the Debian package mirror.
set -euo pipefail
say() { printf 'promtool: %s\n' "$*"; }
as_root() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }
if command -v promtool >/dev/null 2>&1; then
  say "$(promtool --version 2>&1 | head -n 1)"
  exit 0
fi
say "taking promtool out of Debian's prometheus package"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 777 "$work" # apt's download user writes here
as_root apt-get update -qq >/dev/null || say "apt-get update failed; trying the cached package lists"
(cd "$work" && apt-get download -qq prometheus 2>/dev/null)
dpkg-deb -x "$work"/prometheus_*.deb "$work/x"
as_root install -m 0755 "$work/x/usr/bin/promtool" /usr/local/bin/promtool
say "$(promtool --version 2>&1 | head -n 1)"
