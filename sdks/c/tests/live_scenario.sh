#!/usr/bin/env bash
# The C SDK's live scenario, as scripts/sdk-live.ts runs it (sdks/c/scenario): brings the program
# up to date (configuring sdks/c/build when it is not; the build's output goes to stderr, since
# stdout is the scenario's), then runs it.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ ! -f "$here/build/CMakeCache.txt" ]]; then
  cmake -S "$here" -B "$here/build" -DCMAKE_BUILD_TYPE=Release >&2
fi
cmake --build "$here/build" --target live_scenario -j2 >&2
exec "$here/build/live_scenario"
