#!/usr/bin/env bash
# Builds extension/bundled/ so the .vsix runs on a machine with only Python >= 3.11 and no network:
#   libs/                         mltriage (with its signatures) + pure-Python deps, any CPython >= 3.11
#   native/cpXY-linux-x86_64/     regex + pydantic-core unpacked from the manylinux wheel for that CPython
# Why unpacked wheels and not a venv built on first start: a user's Python may lack pip or ensurepip
# (Debian without python3-venv), and nothing has to be written or installed on their machine; the
# start script (bundled/tool/start.py) just puts the matching directory on sys.path.
# Wheels are fetched from the package index once and cached in .whl/ (git-ignored).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${MLTRIAGE_BUNDLE_OUT:-$ROOT/extension/bundled}
REQ=$ROOT/extension/requirements
CACHE=${MLTRIAGE_WHEEL_CACHE:-$ROOT/.whl}
ABIS=${MLTRIAGE_BUNDLE_PYTHONS:-"3.11 3.12 3.13 3.14"}
PY=${PYTHON:-}
if [ -z "$PY" ]; then
  if [ -x "$ROOT/.venv/bin/python" ]; then PY=$ROOT/.venv/bin/python; else PY=python3; fi
fi
pip_() { "$PY" -m pip --disable-pip-version-check -q "$@"; }

rm -rf "$OUT/libs" "$OUT/native"
mkdir -p "$OUT/libs" "$OUT/native" "$CACHE/pure" "$CACHE/native"

echo "bundle: mltriage package -> libs/"
# build from the checkout with hatchling when it is installed here, else pip fetches it
if "$PY" -c 'import hatchling' 2>/dev/null; then
  pip_ install --no-deps --no-build-isolation --target "$OUT/libs" "$ROOT"
else
  pip_ install --no-deps --target "$OUT/libs" "$ROOT"
fi

echo "bundle: pure dependencies -> libs/"
pip_ download --no-deps --only-binary=:all: -d "$CACHE/pure" -r "$REQ/pure.txt"
pip_ install --no-deps --no-index --find-links "$CACHE/pure" --target "$OUT/libs" -r "$REQ/pure.txt"

for version in $ABIS; do
  tag=cp${version/./}
  dest=$OUT/native/$tag-linux-x86_64
  echo "bundle: compiled dependencies for CPython $version -> native/$tag-linux-x86_64/"
  pip_ download --no-deps --only-binary=:all: --implementation cp --python-version "$version" --abi "$tag" \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d "$CACHE/native" -r "$REQ/native.txt"
  mkdir -p "$dest"
  while read -r spec; do
    case "$spec" in ''|'#'*) continue ;; esac
    name=${spec%%==*}; version_pin=${spec#*==}; stem=${name//-/_}
    wheel=$(ls "$CACHE/native/$stem-$version_pin-$tag-$tag-"*manylinux*x86_64*.whl | head -1)
    "$PY" -m zipfile -e "$wheel" "$dest"
  done < "$REQ/native.txt"
done

# console scripts are not needed in the bundle; byte-code made by pip or a test run is not kept
rm -rf "$OUT/libs/bin" "$OUT/libs/example.py"
find "$OUT" -name '__pycache__' -type d -prune -exec rm -rf {} +
# Byte-code for each bundled CPython this machine has (issue 22.5: compiling lsprotocol, pydantic and
# the engine on the first start cost seconds of the first squiggle in a fresh window). checked-hash:
# unpacking the .vsix gives every file a new mtime, which would make timestamp-checked .pyc stale;
# a hash-checked one stays valid while its source is the same. A CPython not here compiles on first start.
for version in $ABIS; do
  tag=cp${version/./}
  py=
  for candidate in "python$version" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$version".*/bin/"python$version"; do
    if "$candidate" -c 'pass' 2>/dev/null; then py=$candidate; break; fi
  done
  if [ -n "$py" ] && "$py" -c 'import sys; sys.exit(sys.version_info[:2] != tuple(map(int, sys.argv[1].split("."))))' "$version" 2>/dev/null; then
    echo "bundle: byte-code for CPython $version"
    "$py" -m compileall -q -j 0 --invalidation-mode checked-hash "$OUT/libs" "$OUT/native/$tag-linux-x86_64" >/dev/null
  else
    echo "bundle: no CPython $version here: it compiles the bundle on its first start"
  fi
done
echo "bundle: done ($(du -sh "$OUT" | cut -f1))"
