#!/usr/bin/env bash
# Builds the Python SDK's wheel and runs its tests against the built package, offline, with
# Debian's Python (/usr/bin/python3: python3-cryptography, python3-jwt; python3-mypy if present).
# Build outputs go to sdks/python/build/. Runnable from any directory.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PYTHON=/usr/bin/python3
BUILD="$HERE/build"
cd "$HERE"

export PYTHONPYCACHEPREFIX="$BUILD/pycache"
export PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1

rm -rf "$BUILD/pkg" "$BUILD/dist" "$BUILD/site"
mkdir -p "$BUILD/pkg" "$BUILD/dist"

# The wheel, by setuptools' PEP 517 hook (no pip, no network), from a copy so the tree stays clean.
cp -R pyproject.toml README.md src "$BUILD/pkg/"
(cd "$BUILD/pkg" && "$PYTHON" -c '
import sys
from setuptools import build_meta
print("built", build_meta.build_wheel(sys.argv[1]))
' "$BUILD/dist" >"$BUILD/wheel.log" 2>&1) || { cat "$BUILD/wheel.log"; exit 1; }
WHEEL="$(ls "$BUILD"/dist/keyward-0.1.0-*.whl)"

# A pure-Python wheel installs by unpacking; the tests import this copy, not src/.
"$PYTHON" - "$WHEEL" "$BUILD/site" <<'PY'
import sys, zipfile
wheel, site = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as archive:
    names = set(archive.namelist())
    for needed in ("keyward/__init__.py", "keyward/py.typed", "keyward/session.py",
                   "keyward/offline.py", "keyward/webhooks.py", "keyward/errors.py",
                   "keyward/activation.py", "keyward/activate.py"):
        if needed not in names:
            sys.exit(f"{wheel} lacks {needed}")
    metadata = archive.read("keyward-0.1.0.dist-info/METADATA").decode()
    for line in ("Version: 0.1.0", "Requires-Python: >=3.9", "Requires-Dist: cryptography"):
        if line not in metadata.splitlines():
            sys.exit(f"{wheel}: METADATA lacks {line!r}")
    archive.extractall(site)
print("wheel", wheel.rsplit("/", 1)[-1], "holds py.typed and its metadata")
PY

# Installed as a customer installs it: pip, from the wheel alone (no index), into a fresh virtual
# environment in a scratch folder outside the repository, then imported and run from there. PyPI
# is out of reach, so the venv sees Debian's site-packages (python3-cryptography satisfies the
# wheel's one dependency); pip still checks that it is there.
SCRATCH="$(mktemp -d)"
trap 'rm -rf "$SCRATCH"' EXIT
"$PYTHON" -m venv --system-site-packages "$SCRATCH/venv"
"$SCRATCH/venv/bin/python" -m pip install --quiet --no-index "$WHEEL"
(cd "$SCRATCH" && "$SCRATCH/venv/bin/python" - "$SCRATCH/venv" <<'PY'
import os, sys
import keyward
from importlib.metadata import version
venv = os.path.realpath(sys.argv[1])
if not os.path.realpath(keyward.__file__).startswith(venv + os.sep):
    sys.exit(f"imported {keyward.__file__}, not the venv's install")
if version("keyward") != keyward.__version__:
    sys.exit(f"installed {version('keyward')}, __version__ says {keyward.__version__}")
request = keyward.create_activation_request("kw_app", "8000000001", "demo-simulator", 7, "fp-1")
assert keyward.read_activation_request(request.code) == request
print("venv: keyward", keyward.__version__, "installed from the wheel, imported and used")
PY
)
(cd "$SCRATCH" && "$SCRATCH/venv/bin/keyward-activate" request --state "$SCRATCH/state" --app kw_app \
  --asset 8000000001 --product demo-simulator --days 7 --fingerprint fp-1 >/dev/null 2>&1) ||
  { echo "venv: the keyward-activate script did not run" >&2; exit 1; }
[[ -f $SCRATCH/state/request.json ]] || { echo "venv: keyward-activate wrote no request.json" >&2; exit 1; }
echo "venv: keyward-activate (console script) wrote its request"

# Type checks, with the toolchain's mypy (Debian's python3-mypy): the package, and each Python
# example of README.md as a customer would paste it (tests/readme_names.pyi declares the names an
# example leaves to the program around it), both --strict against the built package. The target is
# the oldest Python the package supports (Requires-Python >=3.9) when this mypy still accepts it,
# else the one it runs on: a newer mypy drops old targets, so pyproject.toml pins none.
if "$PYTHON" -c 'import mypy' 2>/dev/null; then
  MYPY=("$PYTHON" -m mypy --strict --cache-dir "$BUILD/mypy-cache")
  if "${MYPY[@]}" --python-version 3.9 -c 'x: int = 1' >/dev/null 2>&1; then
    MYPY+=(--python-version 3.9)
  else
    echo "mypy: $("$PYTHON" -m mypy --version) does not check for Python 3.9; checking for $("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
  fi
  "${MYPY[@]}" "$BUILD/site/keyward"
  rm -rf "$BUILD/readme" && mkdir -p "$BUILD/readme"
  cp tests/readme_names.pyi "$BUILD/readme/"
  "$PYTHON" - README.md "$BUILD/readme" <<'PY'
import re, sys
readme, out = sys.argv[1], sys.argv[2]
text = open(readme, encoding="utf-8").read()
count = 0
for match in re.finditer(r"^```python\n(.*?)^```", text, re.S | re.M):
    line = text.count("\n", 0, match.start(1)) + 1
    with open(f"{out}/readme_line_{line}.py", "w", encoding="utf-8") as example:
        # One line of names before the example's first: mypy's line numbers are the README's.
        example.write("from readme_names import *\n")
        example.write("\n" * max(0, line - 2) + match.group(1))
    count += 1
if count == 0:
    sys.exit(f"{readme}: no python example found")
print(f"README.md: {count} python examples to type-check")
PY
  (cd "$BUILD/readme" && MYPYPATH="$BUILD/site" "${MYPY[@]}" --config-file "$HERE/pyproject.toml" .) ||
    { echo "README.md: an example fails mypy --strict (file readme_line_N.py: N is the README's line)" >&2; exit 1; }
else
  echo "mypy: python3-mypy not installed, type check not run"
fi

PYTHONPATH="$BUILD/site" "$PYTHON" - "$BUILD/site" <<'PY'
import os, sys, unittest
import keyward
site = os.path.realpath(sys.argv[1])
if not os.path.realpath(keyward.__file__).startswith(site + os.sep):
    sys.exit(f"the tests would import {keyward.__file__}, not the built wheel")
suite = unittest.defaultTestLoader.discover("tests", top_level_dir=".")
result = unittest.TextTestRunner(verbosity=1).run(suite)
failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
passed = result.testsRun - len(result.failures) - len(result.errors) - len(result.skipped)
print(f"python: {passed} passed, {failed} failed")
sys.exit(0 if result.wasSuccessful() and result.testsRun > 0 else 1)
PY
