#!/usr/bin/env bash
# What Jib lays over the base: /app/rebalance.jar, /app/rebalance.jsa (the class data sharing archive, trained in the
# base's own JVM: an archive made by another JVM build is ignored) and /usr/local/bin/rebalance.
# Usage: scripts/image-app.sh BASE.tar JAR OUT_DIR. Needs root (a chroot with /proc mounted in a mount namespace).
# BASE.tar "-" (a registry base, which is not here to train in): no archive; the launcher then starts without one.
set -euo pipefail
base="${1:?usage: scripts/image-app.sh BASE.tar JAR OUT_DIR}"
jar="${2:?}"
out="${3:?}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
rm -rf "$out"
install -d "$out/app" "$out/usr/local/bin"
install -m 755 "$here/deploy/image/rebalance" "$out/usr/local/bin/rebalance"
if [[ "$base" == "-" ]]; then
  install -m 644 "$jar" "$out/app/rebalance.jar"
  exit 0
fi
mkdir -p "$work/rootfs"
tar -xOf "$base" --wildcards '*/layer.tar' | tar -x -C "$work/rootfs"
install -d -o 10001 -g 10001 "$work/rootfs/app"
install -m 644 "$jar" "$work/rootfs/app/rebalance.jar"
# Jib gives every file this time (EPOCH_PLUS_SECOND); the archive records the jar's, so train on the same
touch -d @1 "$work/rootfs/app/rebalance.jar"
unshare -m sh -c 'mount -t proc proc "$1/proc" && chroot --userspec=10001:10001 "$1" java -XX:+UseParallelGC \
  -XX:ArchiveClassesAtExit=/app/rebalance.jsa -Xlog:cds=off -Xlog:cds+dynamic=off -cp /app/rebalance.jar \
  io.rebalance.cli.StartupTraining' sh "$work/rootfs"
cp -p "$work/rootfs/app/rebalance.jar" "$work/rootfs/app/rebalance.jsa" "$out/app/"
