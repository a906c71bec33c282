#!/usr/bin/env bash
# Builds and tests every SDK (each folder's own ci.sh: its conformance vectors and unit tests,
# offline, with Debian's toolchains), then runs every SDK's live scenario, and the TypeScript
# client's, against one real Keyward (scripts/sdk-live.ts); between the two, the activation programs
# on one shared state directory (sdks/activation-state.sh). Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

SDKS=(c python java go)

# One version for every SDK: @keyward/client's (each SDK's README, "Versions").
echo "== SDK versions"
want=$(node -p 'JSON.parse(require("fs").readFileSync("packages/client/package.json", "utf8")).version')
versions=(
  "sdks/c/CMakeLists.txt=$(sed -n 's/^project(keyward VERSION \([^ ]*\) .*/\1/p' sdks/c/CMakeLists.txt)"
  "sdks/c/include/keyward.h=$(sed -n 's/^#define KW_VERSION "\(.*\)"$/\1/p' sdks/c/include/keyward.h)"
  "sdks/python/pyproject.toml=$(sed -n 's/^version = "\(.*\)"$/\1/p' sdks/python/pyproject.toml)"
  "sdks/python/src/keyward/_version.py=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' sdks/python/src/keyward/_version.py)"
  "sdks/java/pom.xml=$(sed -n 's:^  <version>\(.*\)</version>$:\1:p' sdks/java/pom.xml | head -1)"
  "sdks/java/Keyward.java=$(sed -n 's/.*String VERSION = "\(.*\)";/\1/p' sdks/java/src/main/java/dev/keyward/Keyward.java)"
  "sdks/go/session.go=$(sed -n 's/^const Version = "\(.*\)"$/\1/p' sdks/go/session.go)"
)
for entry in "${versions[@]}"; do
  if [ "${entry#*=}" != "$want" ]; then
    echo "${entry%%=*} says version '${entry#*=}', @keyward/client is $want" >&2
    exit 1
  fi
done
echo "== every SDK is version $want, as @keyward/client"
scenarios=(--scenario "typescript=npx tsx scripts/sdk-live-reference.ts")
for sdk in "${SDKS[@]}"; do
  echo "== SDK $sdk: build and tests"
  started=$SECONDS
  bash "sdks/$sdk/ci.sh"
  echo "== SDK $sdk: passed in $((SECONDS - started)) s"
  scenarios+=(--scenario "$sdk=$(tr -d '\n' < "sdks/$sdk/scenario")")
done

echo "== activation state: one directory, every SDK's program"
bash sdks/activation-state.sh

echo "== SDK live scenarios (${#scenarios[@]} / 2 programs, one server)"
npx tsx scripts/sdk-live.ts "${scenarios[@]}"

echo "== the C and Python SDKs against a relay, verifying with the vendor's keys alone"
npx tsx scripts/sdk-relay.ts
