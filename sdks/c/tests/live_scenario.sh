#!/usr/bin/env bash
# The C SDK's live scenario, as scripts/sdk-live.ts runs it (sdks/c/scenario): builds the program
# when it is missing (the build's output goes to stderr: stdout is the scenario's), then runs it.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ ! -x "$here/build/live_scenario" ]]; then
  cmake -S "$here" -B "$here/build" >&2
  cmake --build "$here/build" --target live_scenario -j2 >&2
fi
exec "$here/build/live_scenario"
