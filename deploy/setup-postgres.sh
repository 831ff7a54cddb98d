#!/bin/sh
# One-shot schema setup for the Temporal server's PostgreSQL databases (docker-compose.yml, service temporal-schema,
# image temporalio/admin-tools). Safe to run on every `docker compose up`: creating an existing database is skipped,
# and setup-schema / update-schema only bring the schema up to the tools' version.
set -eu

: "${POSTGRES_SEEDS:?}" "${POSTGRES_USER:?}" "${SQL_PASSWORD:?}"
DB_PORT="${DB_PORT:-5432}"
# The admin-tools image keeps the schema here; a native run (npm run prod-check) points at the server module's own.
SCHEMA_ROOT="${SCHEMA_ROOT:-/etc/temporal/schema/postgresql/v12}"

echo "Waiting for PostgreSQL at ${POSTGRES_SEEDS}:${DB_PORT}..."
until nc -z "${POSTGRES_SEEDS}" "${DB_PORT}"; do sleep 1; done

sql() { temporal-sql-tool --plugin postgres12 --ep "${POSTGRES_SEEDS}" -u "${POSTGRES_USER}" -p "${DB_PORT}" "$@"; }

for pair in temporal:temporal temporal_visibility:visibility; do
  db="${pair%%:*}"
  schema="${pair#*:}"
  sql --db "${db}" create || echo "Database ${db} exists already."
  sql --db "${db}" setup-schema -v 0.0
  sql --db "${db}" update-schema -d "${SCHEMA_ROOT}/${schema}/versioned"
done
echo 'PostgreSQL schema is up to date.'
