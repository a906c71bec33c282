#!/usr/bin/env bash
# The C SDK's CI: configure, build (warnings are errors) and run its tests, offline.
# Needs Debian's gcc, cmake, pkg-config, libssl-dev, libcurl4-openssl-dev, libcjson-dev and
# libsodium-dev. Runs from any directory; builds go to sdks/c/build and sdks/c/build-openssl
# (ignored by git).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# The library as shipped: Ed25519 by libsodium. Every test.
cmake -S "$here" -B "$here/build" -DCMAKE_BUILD_TYPE=Release -DKEYWARD_WERROR=ON -DKEYWARD_SODIUM=ON >/dev/null
cmake --build "$here/build" -j2 >/dev/null
ctest --test-dir "$here/build" --output-on-failure
# Installed as a customer installs it: to a scratch prefix, then built against with pkg-config and
# with find_package(keyward CONFIG).
bash "$here/tests/install_consumers.sh" "$here/build"

# Without libsodium, Ed25519 by OpenSSL: the offline and activation tests again.
cmake -S "$here" -B "$here/build-openssl" -DCMAKE_BUILD_TYPE=Release -DKEYWARD_WERROR=ON -DKEYWARD_SODIUM=OFF \
  -DKEYWARD_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$here/build-openssl" -j2 --target test_vectors test_offline test_activation >/dev/null
ctest --test-dir "$here/build-openssl" --output-on-failure -R '^(conformance_vectors|offline|activation)$'
