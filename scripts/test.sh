#!/usr/bin/env bash
# Installs what is missing, then runs every check CI runs: lint, typecheck, the compose file
# (where `docker compose` exists), and the whole vitest suite against real PostgreSQL, Temporal,
# Chromium and SMTP. Extra arguments go to vitest (e.g. a file: bash scripts/test.sh test/client/client.test.ts).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh --

step() { printf '\n== %s\n' "$*"; }

step "lint (biome)"
npm run --silent lint

step "typecheck (tsc)"
npm run --silent typecheck

step "compose file"
# Only the file is checked: no engine runs containers here. Debian's docker-compose (1.29) reads
# the file without an engine, so a fresh Debian machine gets it rather than skipping the check.
if ! docker compose version >/dev/null 2>&1 && ! docker-compose version >/dev/null 2>&1 \
  && command -v apt-get >/dev/null && is_root; then
  apt_install docker-compose
fi
# The Temporal UI's OpenID Connect client is the operator's to set (compose refuses to start
# without it): placeholders let the file be read.
export TEMPORAL_UI_OIDC_ISSUER="${TEMPORAL_UI_OIDC_ISSUER:-https://issuer.example}"
export TEMPORAL_UI_OIDC_CLIENT_ID="${TEMPORAL_UI_OIDC_CLIENT_ID:-check}" TEMPORAL_UI_OIDC_CLIENT_SECRET="${TEMPORAL_UI_OIDC_CLIENT_SECRET:-check}"
if docker compose version >/dev/null 2>&1; then
  docker compose -f temporal-compose.yml config -q
  echo "temporal-compose.yml: valid (docker compose)"
elif docker-compose version >/dev/null 2>&1; then
  docker-compose -f temporal-compose.yml config -q
  echo "temporal-compose.yml: valid (docker-compose)"
else
  echo "skipped: neither \`docker compose\` nor docker-compose is installed"
fi

step "tests (vitest)"
results="$(mktemp -d)/vitest.json"
status=0
npm test -- --reporter=default --reporter=json --outputFile.json="$results" "$@" || status=$?

# One plain closing line with the counts, whatever the reporter above printed.
if [ -s "$results" ]; then
  node -e '
    const r = require(process.argv[1]);
    const skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
    // A file that failed to load has no test results of its own: count it as one failure.
    const brokenFiles = (r.testResults ?? []).filter((f) => f.status === "failed" && !(f.assertionResults ?? []).length).length;
    console.log(`\ntests: ${r.numPassedTests} passed, ${r.numFailedTests + brokenFiles} failed, ${skipped} skipped`);
  ' "$results"
else
  echo "tests: vitest wrote no results (exit $status)"
fi
rm -rf "$(dirname "$results")"
exit "$status"
