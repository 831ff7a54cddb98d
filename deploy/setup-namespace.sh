#!/bin/sh
# One-shot: creates the namespace and registers this project's search attributes (docker-compose.yml, service
# temporal-setup, image temporalio/admin-tools; test/deployment.test.ts runs it against a dev server). Idempotent.
#   TEMPORAL_ADDRESS     the frontend, host:port
#   NAMESPACE            default "default"
#   RETENTION            default 72h
#   SEARCH_ATTRIBUTES    space-separated Name=Type pairs (common/search-attributes.ts; the test keeps them equal)
set -eu

NAMESPACE="${NAMESPACE:-default}"
RETENTION="${RETENTION:-72h}"
: "${TEMPORAL_ADDRESS:?}" "${SEARCH_ATTRIBUTES:?}"

echo "Waiting for the Temporal server at ${TEMPORAL_ADDRESS}..."
attempt=0
until temporal operator cluster health --address "${TEMPORAL_ADDRESS}" >/dev/null 2>&1; do
  attempt=$((attempt + 1))
  if [ "${attempt}" -ge 60 ]; then echo 'The Temporal server did not become healthy in time.' >&2; exit 1; fi
  sleep 2
done

if temporal operator namespace describe --address "${TEMPORAL_ADDRESS}" --namespace "${NAMESPACE}" >/dev/null 2>&1; then
  echo "Namespace ${NAMESPACE} exists."
else
  temporal operator namespace create --address "${TEMPORAL_ADDRESS}" --namespace "${NAMESPACE}" --retention "${RETENTION}"
fi

# A new namespace (and a new search attribute) reaches every frontend's cache asynchronously: list until it answers.
list_attributes() {
  tries=0
  until listed="$(temporal operator search-attribute list --address "${TEMPORAL_ADDRESS}" --namespace "${NAMESPACE}" 2>&1)"; do
    tries=$((tries + 1))
    if [ "${tries}" -ge 60 ]; then echo "Namespace ${NAMESPACE} did not become usable in time: ${listed}" >&2; exit 1; fi
    sleep 1
  done
  printf '%s\n' "${listed}"
}

existing="$(list_attributes)"
for pair in ${SEARCH_ATTRIBUTES}; do
  name="${pair%%=*}"
  type="${pair#*=}"
  if printf '%s\n' "${existing}" | grep -qw -- "${name}"; then
    echo "Search attribute ${name} exists."
  else
    temporal operator search-attribute create --address "${TEMPORAL_ADDRESS}" --namespace "${NAMESPACE}" --name "${name}" --type "${type}"
  fi
done

# Wait until all of them are listed, so the workers that start next can set them.
attempt=0
for pair in ${SEARCH_ATTRIBUTES}; do
  until list_attributes | grep -qw -- "${pair%%=*}"; do
    attempt=$((attempt + 1))
    if [ "${attempt}" -ge 60 ]; then echo "Search attribute ${pair%%=*} did not appear in time." >&2; exit 1; fi
    sleep 1
  done
done
echo "Namespace ${NAMESPACE} is ready."
