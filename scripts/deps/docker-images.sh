#!/usr/bin/env bash
# Builds the images the cairn-docker integration tests run, with no registry:
#   - cairn-test/busybox:1  FROM scratch with Debian's busybox-static binary;
#   - cairn-test/postgres:1 a debootstrapped bookworm root file system with Debian's
#     PostgreSQL, brought in with `docker import`, plus an entry point on top.
# Each image carries a label with a hash of its inputs and is rebuilt only when
# that hash changes. Runs as root and assumes `apt-get update` has been run.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
IMAGES="$ROOT/tests/images"
LABEL=cairn.test.inputs-hash
# Bump when the recipe below changes in a way the hashed files do not show.
RECIPE=2
SUITE=bookworm
MIRROR=http://deb.debian.org/debian
PG_PACKAGES=postgresql-15

log() { echo "docker-images: $*"; }

apt_install() {
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@"
}

if ! docker version >/dev/null 2>&1; then
    echo "docker-images: no Docker engine answers on this machine; start dockerd first" >&2
    exit 1
fi

# The label value an image has, or nothing when the image does not exist.
image_hash() {
    docker image inspect -f "{{ index .Config.Labels \"$LABEL\" }}" "$1" 2>/dev/null || true
}

hash_of() { sha256sum "$@" | sha256sum | cut -c1-32; }

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# --- busybox ---------------------------------------------------------------
if [ ! -x /bin/busybox ] || ! dpkg -s busybox-static >/dev/null 2>&1; then
    log "installing busybox-static"
    apt_install busybox-static
fi
BB_HASH="r$RECIPE-$(hash_of "$IMAGES/busybox/Dockerfile" /bin/busybox)"
if [ "$(image_hash cairn-test/busybox:1)" = "$BB_HASH" ]; then
    log "cairn-test/busybox:1 is up to date"
else
    log "building cairn-test/busybox:1"
    mkdir "$WORK/busybox"
    cp "$IMAGES/busybox/Dockerfile" "$WORK/busybox/"
    cp /bin/busybox "$WORK/busybox/busybox"
    docker build -q --label "$LABEL=$BB_HASH" -t cairn-test/busybox:1 "$WORK/busybox" >/dev/null
fi

# --- postgres root file system ----------------------------------------------
ROOTFS_HASH="r$RECIPE-$(echo "$SUITE $MIRROR minbase $PG_PACKAGES" | sha256sum | cut -c1-32)"
ROOTFS_TAG="cairn-test/postgres-rootfs:$ROOTFS_HASH"
if [ "$(image_hash "$ROOTFS_TAG")" = "$ROOTFS_HASH" ]; then
    log "$ROOTFS_TAG is up to date"
else
    command -v debootstrap >/dev/null 2>&1 || { log "installing debootstrap"; apt_install debootstrap; }
    log "debootstrapping $SUITE with $PG_PACKAGES (a few minutes)"
    RFS="$WORK/rootfs"
    # Keep the downloaded .debs between runs so a rebuild does not fetch them again.
    CACHE=/var/cache/cairn-test/debootstrap
    mkdir -p "$CACHE"
    debootstrap --variant=minbase --include="$PG_PACKAGES" --cache-dir="$CACHE" \
        "$SUITE" "$RFS" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 \
        || { tail -n 40 "$WORK/debootstrap.log" >&2; exit 1; }
    # Trim: the cluster Debian's postinst creates (the entry point makes its own in
    # the data volume), documentation, translations, apt's caches and lists.
    rm -rf "$RFS"/var/lib/postgresql/15 "$RFS"/etc/postgresql/15 \
        "$RFS"/usr/share/doc/* "$RFS"/usr/share/man/* "$RFS"/usr/share/info/* \
        "$RFS"/usr/share/locale/* "$RFS"/var/cache/apt/* "$RFS"/var/lib/apt/lists/* \
        "$RFS"/var/cache/debconf/*-old "$RFS"/var/log/*.log
    mkdir -p "$RFS/var/lib/postgresql"
    tar -C "$RFS" --numeric-owner -c . \
        | docker import --change "LABEL $LABEL=$ROOTFS_HASH" - "$ROOTFS_TAG" >/dev/null
fi

# --- postgres ----------------------------------------------------------------
PG_HASH="r$RECIPE-$(hash_of "$IMAGES/postgres/Dockerfile" "$IMAGES/postgres/entrypoint.sh" | cut -c1-16)-$ROOTFS_HASH"
if [ "$(image_hash cairn-test/postgres:1)" = "$PG_HASH" ]; then
    log "cairn-test/postgres:1 is up to date"
else
    log "building cairn-test/postgres:1"
    docker build -q --build-arg "BASE=$ROOTFS_TAG" --label "$LABEL=$PG_HASH" \
        -t cairn-test/postgres:1 "$IMAGES/postgres" >/dev/null
fi

log "ready: cairn-test/busybox:1 cairn-test/postgres:1"
