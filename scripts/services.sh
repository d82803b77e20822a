#!/usr/bin/env bash
# Makes sure Postgres (with wal_level=logical, which the CDC tail needs) and Redis run on this machine.
# Idempotent: starts only what is down, restarts Postgres only if wal_level has to change. Needs root to start
# services; on a machine without them installed but with a Docker engine, it does nothing and the tests and the
# demo start containers with Testcontainers instead.
set -euo pipefail

say() { printf 'services: %s\n' "$*"; }

pg_ok() { pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; }
redis_ok() { [[ "$(redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null)" == "PONG" ]]; }
docker_ok() { command -v docker >/dev/null && docker info >/dev/null 2>&1; }
as_root() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }

if ! command -v pg_ctlcluster >/dev/null || ! command -v redis-server >/dev/null; then
  if docker_ok; then
    say "Postgres or Redis is not installed here; Docker runs, so tests and the demo use Testcontainers"
    exit 0
  fi
  say "Postgres and Redis are needed: install the Debian packages postgresql and redis-server, or run Docker" >&2
  exit 1
fi

cluster_version=$(ls /etc/postgresql | sort -V | tail -n 1)
if ! pg_ok; then
  say "starting Postgres $cluster_version"
  as_root pg_ctlcluster --skip-systemctl-redirect "$cluster_version" main start
  for _ in $(seq 1 60); do pg_ok && break; sleep 0.5; done
fi
pg_ok || { say "Postgres did not come up on 127.0.0.1:5432" >&2; exit 1; }

psql_su() { as_root su postgres -c "psql -qAtX -c \"$1\""; }
wal_level=$(psql -h 127.0.0.1 -U postgres -qAtX -c 'SHOW wal_level' 2>/dev/null || psql_su 'SHOW wal_level')
if [[ "$wal_level" != "logical" ]]; then
  say "wal_level is $wal_level; setting logical and restarting Postgres"
  psql -h 127.0.0.1 -U postgres -qAtX -c "ALTER SYSTEM SET wal_level = 'logical'" 2>/dev/null \
    || psql_su "ALTER SYSTEM SET wal_level = 'logical'"
  as_root pg_ctlcluster --skip-systemctl-redirect "$cluster_version" main restart
  for _ in $(seq 1 60); do pg_ok && break; sleep 0.5; done
  wal_level=$(psql -h 127.0.0.1 -U postgres -qAtX -c 'SHOW wal_level')
  [[ "$wal_level" == "logical" ]] || { say "wal_level is still $wal_level after the restart" >&2; exit 1; }
fi

if ! redis_ok; then
  say "starting Redis"
  as_root mkdir -p /var/lib/redis /var/log/redis
  # an append-only file and no eviction: the cutover refuses a Redis that could lose its route (docs/redis.md)
  as_root redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly yes \
    --maxmemory-policy noeviction --dir /var/lib/redis --logfile /var/log/redis/ci.log
  for _ in $(seq 1 40); do redis_ok && break; sleep 0.25; done
fi
redis_ok || { say "Redis did not come up on 127.0.0.1:6379" >&2; exit 1; }
if [[ "$(redis-cli -h 127.0.0.1 -p 6379 config get appendonly | tail -n 1)" != "yes" ]]; then
  say "Redis runs without an append-only file; turning it on (CONFIG SET appendonly yes)"
  redis-cli -h 127.0.0.1 -p 6379 config set appendonly yes >/dev/null
fi
if [[ "$(redis-cli -h 127.0.0.1 -p 6379 config get maxmemory-policy | tail -n 1)" != "noeviction" ]]; then
  say "Redis may evict keys; setting maxmemory-policy noeviction"
  redis-cli -h 127.0.0.1 -p 6379 config set maxmemory-policy noeviction >/dev/null
fi

say "Postgres $cluster_version (wal_level=$wal_level) and Redis are up"
