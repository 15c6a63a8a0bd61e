#!/usr/bin/env bash
# Install varco with its test tools and run the whole suite (SQLite and PostgreSQL) plus ruff.
set -euo pipefail
cd "$(dirname "$0")/.."
TEST=1 bash scripts/install.sh
.venv/bin/ruff check src tests bench
# Browser tests (tests/panel) drive Debian's chromium through Playwright; never `playwright install`.
command -v chromium >/dev/null || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium)
.venv/bin/python -m pytest -n "${PYTEST_WORKERS:-2}" "$@"
