#!/usr/bin/env bash
# Install varco in .venv and run it on the embedded default (SQLite + in-process worker) with demo data.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
export VARCO_PROFILE="${VARCO_PROFILE:-demo}"
exec .venv/bin/varco serve --host "${VARCO_HOST:-127.0.0.1}" --port "${VARCO_PORT:-8000}"
