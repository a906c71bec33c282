#!/usr/bin/env bash
# The SDK as a customer installs it (sdks/c/ci.sh runs this after the build):
#   install_consumers.sh BUILD_DIR
# installs BUILD_DIR to a prefix in a scratch folder outside the repository, moves the prefix
# (an installation must not depend on where it was made), then builds and runs
# tests/consumer/consumer.c against it twice each way: with pkg-config (shared, then --static) and
# with find_package(keyward CONFIG) (keyward::keyward, keyward::keyward_static).
set -euo pipefail
build=$(cd "$1" && pwd)
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

cmake --install "$build" --prefix "$scratch/installed" >/dev/null
mv "$scratch/installed" "$scratch/prefix"
prefix=$scratch/prefix
libdir=$(dirname "$(find "$prefix" -name keyward.pc)")/..
libdir=$(cd "$libdir" && pwd)
for file in include/keyward.h lib*/libkeyward.so.0 lib*/libkeyward.a lib*/cmake/keyward/keywardConfig.cmake; do
  compgen -G "$prefix/$file" >/dev/null || { echo "c install: $file is not installed" >&2; exit 1; }
done

cp "$here/consumer/consumer.c" "$here/consumer/CMakeLists.txt" "$scratch/"
cd "$scratch"

# pkg-config: the .pc names the prefix it lies in, not the one CMake was configured with.
export PKG_CONFIG_PATH="$libdir/pkgconfig"
[[ $(pkg-config --variable=includedir keyward) -ef $prefix/include ]] ||
  { echo "c install: keyward.pc names $(pkg-config --variable=includedir keyward), not $prefix/include" >&2; exit 1; }
# shellcheck disable=SC2046 # pkg-config's flags are words
cc -std=c99 -Wall -Wextra -Werror -o consumer-pc consumer.c $(pkg-config --cflags --libs keyward) -Wl,-rpath,"$libdir"
./consumer-pc
# libkeyward.a, its dependencies shared: the packages keyward.pc requires privately, as they are.
deps=$(pkg-config --print-requires-private keyward | cut -d' ' -f1)
# shellcheck disable=SC2046,SC2086
cc -std=c99 -Wall -Wextra -Werror -o consumer-pc-static consumer.c $(pkg-config --cflags keyward) \
  -Wl,-Bstatic $(pkg-config --libs keyward) -Wl,-Bdynamic $(pkg-config --libs $deps) -pthread
./consumer-pc-static
# (ldd's output is kept first: grep -q ending a pipe early would fail it under pipefail.)
if grep -q libkeyward <<<"$(ldd consumer-pc-static)"; then
  echo "c install: the static consumer loads libkeyward.so" >&2
  exit 1
fi

# find_package(keyward CONFIG), from the moved prefix.
cmake -S . -B cmake-build -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build cmake-build >/dev/null
./cmake-build/consumer_shared
./cmake-build/consumer_static
grep -q "libkeyward.so.0 => $libdir/" <<<"$(ldd cmake-build/consumer_shared)" ||
  { echo "c install: consumer_shared does not load the installed libkeyward.so.0" >&2; exit 1; }
echo "c install: pkg-config and find_package(keyward CONFIG) consumers build and run against $prefix"
