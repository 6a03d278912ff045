#!/usr/bin/env bash
# Installs the archivers the export/import tests read and write archives with:
#   - GNU tar (Debian's `tar`, normally present) and gzip;
#   - bsdtar, from Debian's libarchive-tools.
# Idempotent: each step runs only when its component is missing. Runs as root and
# assumes `apt-get update` has been run.
set -euo pipefail

apt_install() {
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@"
}

if ! command -v tar >/dev/null 2>&1 || ! tar --version 2>/dev/null | grep -q 'GNU tar'; then
    echo "archive-tools: installing GNU tar"
    apt_install tar
fi
if ! command -v gzip >/dev/null 2>&1; then
    echo "archive-tools: installing gzip"
    apt_install gzip
fi
if ! command -v bsdtar >/dev/null 2>&1; then
    echo "archive-tools: installing bsdtar (libarchive-tools)"
    apt_install libarchive-tools
fi
