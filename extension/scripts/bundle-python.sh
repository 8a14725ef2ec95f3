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

# byte-code and console scripts are not needed in the bundle
rm -rf "$OUT/libs/bin" "$OUT/libs/example.py"
find "$OUT" -name '__pycache__' -type d -prune -exec rm -rf {} +
echo "bundle: done ($(du -sh "$OUT" | cut -f1))"
