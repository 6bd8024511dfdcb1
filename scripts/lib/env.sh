# Sourced by scripts/demo and scripts/test: make sure .venv exists with the pinned
# dependencies installed (idempotent; reinstalls only when setup.py changes).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"

find_python() {
  for candidate in "${PYTHON:-}" python3.11 python3; do
    [ -n "$candidate" ] || continue
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
      echo "$candidate"; return 0
    fi
  done
  echo "relatedpages needs Python 3.11 (mrjob 0.7.4 is the last release; see DESIGN.md)" >&2
  return 1
}

VENV="$ROOT/.venv"
STAMP="$VENV/.installed-$(sha256sum setup.py | cut -c1-16)"
if [ ! -x "$VENV/bin/python" ]; then
  echo "==> creating $VENV" >&2
  "$(find_python)" -m venv "$VENV"
fi
if [ ! -f "$STAMP" ]; then
  echo "==> installing relatedpages and its pinned dependencies into .venv" >&2
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e ".[test]"
  rm -f "$VENV"/.installed-*
  touch "$STAMP"
fi
export PATH="$VENV/bin:$PATH"
