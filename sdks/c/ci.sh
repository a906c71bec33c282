#!/usr/bin/env bash
# The C SDK's CI: configure, build (warnings are errors) and run its tests, offline.
# Needs Debian's gcc, cmake, pkg-config, libssl-dev, libcurl4-openssl-dev, libcjson-dev and
# libsodium-dev. Runs from any directory; the build goes to sdks/c/build (ignored by git).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="$here/build"

cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release -DKEYWARD_WERROR=ON -DKEYWARD_SODIUM=ON >/dev/null
cmake --build "$build" -j2 >/dev/null
ctest --test-dir "$build" --output-on-failure
