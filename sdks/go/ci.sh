#!/usr/bin/env bash
# Builds the Go SDK and runs its tests, offline: gofmt, go vet, go test (every conformance vector
# of sdks/conformance, the session against a local stub, and keyward-activate built and run end to
# end), and builds the live scenario program into sdks/go/build/keyward-scenario (the command in
# sdks/go/scenario) and the offline activation program into sdks/go/build/keyward-activate. KEYWARD_GO_RACE=1 runs
# the tests under the race detector as well (needs gcc; compiles the standard library once).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="$here/build"
mkdir -p "$build"
cd "$here"

# Nothing reaches a network: no toolchain download, no module proxy, no checksum database.
export GOTOOLCHAIN=local GOFLAGS=-mod=mod GOPROXY=off GOSUMDB=off GO111MODULE=on
export GOCACHE="$build/gocache" GOPATH="$build/gopath" GOMODCACHE="$build/gopath/pkg/mod"

go_bin="${GO:-go}"
if ! command -v "$go_bin" >/dev/null; then
  echo "sdks/go: no go on PATH (Debian: apt-get install golang-go)" >&2
  exit 1
fi
echo "sdks/go: $("$go_bin" version)"

unformatted="$(gofmt -l .)"
if [ -n "$unformatted" ]; then
  echo "sdks/go: not gofmt-formatted:" >&2
  echo "$unformatted" >&2
  exit 1
fi
"$go_bin" vet ./...
"$go_bin" test -count=1 ./...
if [ "${KEYWARD_GO_RACE:-0}" = "1" ]; then
  "$go_bin" test -count=1 -race ./...
fi
"$go_bin" build -o "$build/keyward-scenario" ./cmd/keyward-scenario
"$go_bin" build -o "$build/keyward-activate" ./cmd/keyward-activate
# Used as a customer's module uses it: a module of its own in a scratch folder outside the
# repository, requiring keyward.dev/sdk/go/keyward at this version with a replace to this folder,
# built with go build (nothing fetched: GOPROXY=off) and run.
version=$(sed -n 's/^const Version = "\(.*\)"$/\1/p' session.go)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cp testdata/consumer/main.go "$scratch/"
(
  cd "$scratch"
  "$go_bin" mod init example.com/licensed-app >/dev/null 2>&1
  "$go_bin" mod edit -require="keyward.dev/sdk/go/keyward@v$version" -replace="keyward.dev/sdk/go/keyward=$here"
  "$go_bin" build -o licensed-app .
  ./licensed-app
)
echo "sdks/go: a consumer module (require v$version, replace to sdks/go) builds and runs"
echo "sdks/go: ok (scenario: sdks/go/build/keyward-scenario; activation: sdks/go/build/keyward-activate)"
