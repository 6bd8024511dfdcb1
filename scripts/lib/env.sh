# Sourced by scripts/demo and scripts/test: make sure .venv exists with the pinned
# dependencies installed and the compiled scan built (idempotent; reinstalls only when
# setup.py, pyproject.toml or the compiled scan's sources, segmenter/native_*.pyx and
# native_*.pxd, change).
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
STAMP="$VENV/.installed-$(cat setup.py pyproject.toml segmenter/native_*.pyx segmenter/native_*.pxd | sha256sum | cut -c1-16)"
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

# System tools from Debian's packages that some commands and tests need (the load benchmark's
# wrk, the explorer tests' chromium and a font with Chinese glyphs, a C compiler for the
# MiniCluster's loopback bind()); installed when missing and this shell may (root, apt-get present), else a note.
ensure_debian_packages() {
  local missing=()
  for pair in "$@"; do
    local need="${pair%%:*}"  # a command, or a file the package installs
    if [ "${need:0:1}" = / ]; then [ -e "$need" ] || missing+=("${pair##*:}")
    else command -v "$need" >/dev/null 2>&1 || missing+=("${pair##*:}"); fi
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "==> installing ${missing[*]} (apt-get)" >&2
    apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 ||
      { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1; } ||
      echo "==> could not install ${missing[*]}; tests that need them fail in CI" >&2
  else
    echo "==> missing ${missing[*]}: install them (Debian: apt-get install ${missing[*]})" >&2
  fi
}
ensure_debian_packages wrk:wrk chromium:chromium chromedriver:chromium-driver /usr/share/fonts/truetype/wqy/wqy-zenhei.ttc:fonts-wqy-zenhei \
  cc:gcc /usr/include/dlfcn.h:libc6-dev
