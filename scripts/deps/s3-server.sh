#!/usr/bin/env bash
# Installs the S3-compatible server the remote-store tests run on loopback: moto's standalone
# server (`moto_server`, from PyPI's moto[server]). The tests start it themselves, one per
# test on a free port of 127.0.0.1, and fail with a clear message when it is missing.
# Idempotent: installs only when `moto_server` is not on PATH.
set -euo pipefail

if command -v moto_server >/dev/null 2>&1; then
    exit 0
fi
if ! command -v python3 >/dev/null 2>&1; then
    echo "s3-server: installing python3 and pip"
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 python3-pip
fi
echo "s3-server: installing moto[server]"
# Debian's python refuses a system-wide pip install unless told; a pyenv python takes it as is.
python3 -m pip install --quiet 'moto[server]>=5.0.20' 2>/dev/null \
    || python3 -m pip install --quiet --break-system-packages 'moto[server]>=5.0.20'
if command -v pyenv >/dev/null 2>&1; then
    pyenv rehash
fi
command -v moto_server >/dev/null 2>&1 || {
    echo "s3-server: moto_server is still not on PATH after the install" >&2
    exit 1
}
