"""Lays a rootfs tarball out as a one-layer image in `docker save` form, the tarball Jib takes as a `tar://` base.

Usage: oci_base.py ROOTFS.tar OUT.tar (scripts/base-image.sh runs it).
"""
import hashlib
import io
import json
import sys
import tarfile


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def add_bytes(tar, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = 1
    tar.addfile(info, io.BytesIO(data))


def main(rootfs, out):
    diff_id = sha256_of(rootfs)
    created = "1970-01-01T00:00:01Z"
    config = {
        "architecture": "amd64",
        "os": "linux",
        "created": created,
        "config": {"Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8"]},
        "rootfs": {"type": "layers", "diff_ids": ["sha256:" + diff_id]},
        "history": [{"created": created, "created_by": "scripts/base-image.sh: Debian bookworm, openjdk-17-jre-headless"}],
    }
    config_bytes = json.dumps(config, sort_keys=True).encode()
    config_name = hashlib.sha256(config_bytes).hexdigest() + ".json"
    layer_name = diff_id + "/layer.tar"
    manifest = [{"Config": config_name, "RepoTags": ["rebalance-base:bookworm-jre17"], "Layers": [layer_name]}]
    with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as tar:
        add_bytes(tar, config_name, config_bytes)
        info = tar.gettarinfo(rootfs, arcname=layer_name)
        info.mtime = 1
        with open(rootfs, "rb") as f:
            tar.addfile(info, f)
        add_bytes(tar, "manifest.json", json.dumps(manifest).encode())


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
