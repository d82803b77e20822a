#!/usr/bin/env bash
# The image's base, made from Debian's packages alone (no container registry is needed): a Debian 12 (bookworm)
# rootfs by mmdebstrap with Debian's Java 17 runtime (headless) and CA certificates, laid out as a `docker save`
# tarball for Jib's `tar://` base. Usage: scripts/base-image.sh OUT.tar
#
# Made once per machine and kept in $REBALANCE_IMAGE_CACHE (default /var/cache/rebalance-image), keyed by this
# script's text: a second build copies it. Needs root (mmdebstrap's chroot mode; apt-get installs mmdebstrap if it is
# missing). The packages are the suite's current ones; the image lists them in /usr/share/rebalance/packages.txt.
set -euo pipefail
out="${1:?usage: scripts/base-image.sh OUT.tar}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${REBALANCE_IMAGE_CACHE:-/var/cache/rebalance-image}"
key="$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-16)"
cached="$cache/base-bookworm-jre17-$key.tar"
mkdir -p "$(dirname "$out")"

if [[ ! -s "$cached" ]]; then
  if ! command -v mmdebstrap > /dev/null; then
    apt-get update -q > /dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q mmdebstrap > /dev/null
  fi
  mkdir -p "$cache"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  SOURCE_DATE_EPOCH=1 mmdebstrap --quiet --variant=minbase --components=main \
    --include=openjdk-17-jre-headless,ca-certificates \
    --customize-hook='mkdir -p "$1/usr/share/rebalance" "$1/app"' \
    --customize-hook='chroot "$1" dpkg-query -W -f "\${Package} \${Version}\n" > "$1/usr/share/rebalance/packages.txt"' \
    --customize-hook='echo "rebalance:x:10001:10001:rebalance:/app:/usr/sbin/nologin" >> "$1/etc/passwd"' \
    --customize-hook='echo "rebalance:x:10001:" >> "$1/etc/group"' \
    --customize-hook='rm -rf "$1/var/cache/apt/"* "$1/var/lib/apt/lists/"* "$1/var/log/"*' \
    --customize-hook='rm -rf "$1/usr/share/man" "$1/usr/share/locale"' \
    --customize-hook='find "$1/usr/share/doc" -type f ! -name copyright -delete' \
    bookworm "$work/rootfs.tar" \
    "deb http://deb.debian.org/debian bookworm main" \
    "deb http://deb.debian.org/debian-security bookworm-security main"
  python3 "$here/oci_base.py" "$work/rootfs.tar" "$work/base.tar"
  mv "$work/base.tar" "$cached"
fi
cp "$cached" "$out"
