#!/usr/bin/env bash
# Installs restic, the peer the remote-store benchmark (bench/remote) runs beside cairn on the
# same S3 server. Debian's package; idempotent: installs only when `restic` is not on PATH.
set -euo pipefail

if command -v restic >/dev/null 2>&1; then
    exit 0
fi
echo "restic: installing restic with apt-get"
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q --no-install-recommends restic >/dev/null 2>&1 || {
    apt-get update -q >/dev/null
    apt-get install -y -q --no-install-recommends restic >/dev/null
}
command -v restic >/dev/null 2>&1 || {
    echo "restic: restic is still not on PATH after the install" >&2
    exit 1
}
