#!/usr/bin/env bash
# Builds and tests every SDK (each folder's own ci.sh: its conformance vectors and unit tests,
# offline, with Debian's toolchains), then runs every SDK's live scenario, and the TypeScript
# client's, against one real Keyward (scripts/sdk-live.ts). Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

SDKS=(c python java go)
scenarios=(--scenario "typescript=npx tsx scripts/sdk-live-reference.ts")
for sdk in "${SDKS[@]}"; do
  echo "== SDK $sdk: build and tests"
  started=$SECONDS
  bash "sdks/$sdk/ci.sh"
  echo "== SDK $sdk: passed in $((SECONDS - started)) s"
  scenarios+=(--scenario "$sdk=$(tr -d '\n' < "sdks/$sdk/scenario")")
done

echo "== SDK live scenarios (${#scenarios[@]} / 2 programs, one server)"
npx tsx scripts/sdk-live.ts "${scenarios[@]}"
