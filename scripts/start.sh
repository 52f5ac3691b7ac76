#!/usr/bin/env bash
# Quick start: installs what is missing, then runs the whole service in one process on embedded
# defaults (PostgreSQL under .data-shared/, a local Temporal dev server with its history in .data/).
# Ctrl-C stops it.
#   API   http://localhost:3000/api      docs http://localhost:3000/api/docs
#   Temporal UI http://localhost:8233
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh --service
echo "start: npm start (first start initialises .data/ and .data-shared/: a few seconds)"
exec npm start
