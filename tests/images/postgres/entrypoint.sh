#!/bin/sh
# Entry point of cairn-test/postgres: creates the cluster on first start (into the
# data volume), then runs the server as the postgres user in the foreground so
# docker's stop signal reaches it directly. Test-only: trust authentication.
set -eu

PGBIN=/usr/lib/postgresql/15/bin
PGDATA="${PGDATA:-/var/lib/postgresql/data}"
export PGDATA

mkdir -p "$PGDATA" /run/postgresql
chown postgres:postgres "$PGDATA" /run/postgresql
chmod 0700 "$PGDATA"

as_postgres() {
    setpriv --reuid=postgres --regid=postgres --init-groups "$@"
}

if [ ! -s "$PGDATA/PG_VERSION" ]; then
    as_postgres "$PGBIN/initdb" -D "$PGDATA" --username=postgres --auth=trust \
        --encoding=UTF8 --locale=C >/dev/null
    echo "host all all 0.0.0.0/0 trust" >> "$PGDATA/pg_hba.conf"
    if [ -n "${POSTGRES_DB:-}" ] && [ "$POSTGRES_DB" != postgres ]; then
        echo "CREATE DATABASE \"$POSTGRES_DB\";" \
            | as_postgres "$PGBIN/postgres" --single -D "$PGDATA" postgres >/dev/null
    fi
fi

if [ "$#" -eq 0 ] || [ "${1#-}" != "$1" ]; then
    exec setpriv --reuid=postgres --regid=postgres --init-groups \
        "$PGBIN/postgres" -D "$PGDATA" -c listen_addresses='*' "$@"
fi
exec "$@"
