#!/usr/bin/env bash
# One activation state directory whichever SDK's program writes or reads it
# (sdks/conformance/README.md, "The activation state directory"), run after every SDK is built:
#  - on this machine, the Python, Java and Go programs derive one fingerprint: each keeps the
#    others' request as its own (`request --from`, which refuses another machine's request), and the
#    three requests carry the same fingerprint hash;
#  - with the conformance vectors' request and answers, a directory written by one program is
#    read by the others: Python requests, Go installs, Python and Java verify, Java returns, Go
#    sees it returned; then Java requests, Python installs, Go verifies and returns.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

py_tool() { PYTHONPATH="$root/sdks/python/src" python3 -m keyward.activate "$@"; }
go_tool() { "$root/sdks/go/build/keyward-activate" "$@"; }
java_tool() { bash "$root/sdks/java/keyward-activate.sh" "$@"; }
fail() { echo "activation state: $*" >&2; exit 1; }

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
unset KEYWARD_ACTIVATION_DIR

# The fingerprint hash a request file carries, in hex.
fingerprint_hash() {
  PYTHONPATH="$root/sdks/python/src" python3 -c '
import sys, keyward
print(keyward.ActivationRequest.load(sys.argv[1]).fingerprint_hash.hex())' "$1"
}

# 1. One machine, one fingerprint.
for tool in py java go; do
  "${tool}_tool" request --app kw_demo_app --asset 8000000001 --product demo-simulator --days 30 \
    --state "$scratch/own-$tool" >/dev/null 2>&1 || fail "$tool: request failed"
  [[ -f $scratch/own-$tool/request.json ]] || fail "$tool: no request.json"
  [[ ! -e $scratch/own-$tool/fingerprint ]] || fail "$tool: kept the derived fingerprint"
done
want=$(fingerprint_hash "$scratch/own-py/request.json")
for tool in java go; do
  [[ $(fingerprint_hash "$scratch/own-$tool/request.json") == "$want" ]] ||
    fail "$tool's request carries another fingerprint than Python's"
done
for reader in py java go; do
  for writer in py java go; do
    [[ $reader == "$writer" ]] && continue
    "${reader}_tool" request --from "$scratch/own-$writer/request.json" --state "$scratch/from-$writer-by-$reader" \
      >/dev/null 2>"$scratch/err" || fail "$reader refused $writer's request: $(cat "$scratch/err")"
  done
done
echo "activation state: Python, Java and Go derive one fingerprint on this machine ($want), each keeps the others' request"

# 2. One directory, three programs, with the conformance vectors.
vector() {
  python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))
answers = {a["name"]: a["answer"] for a in v["answers"]}
print({"now": v["now"], "code": v["requests"][0]["code"], "fingerprint": v["requests"][0]["fields"]["fingerprint"],
       "typed": answers["typed"], "jws": answers["jws"], "return": v["returns"][0]["code"],
       "jwks": json.dumps(v["jwks"])}[sys.argv[2]])' sdks/conformance/activation.json "$1"
}
now=$(vector now)
vector jwks >"$scratch/vendor-jwks.json"
run() { # expected status, then the command; its output in $scratch/out
  local want=$1
  shift
  local status=0
  "$@" >"$scratch/out" 2>&1 || status=$?
  [[ $status == "$want" ]] || fail "$* exited $status, not $want: $(cat "$scratch/out")"
}

state="$scratch/shared-1"
run 0 py_tool request --from "$(vector code)" --fingerprint "$(vector fingerprint)" --state "$state"
run 0 go_tool install "$(vector typed)" --jwks "$scratch/vendor-jwks.json" --state "$state" --now "$now"
[[ -f $state/activation.json && -f $state/jwks.json && ! -e $state/request.json ]] || fail "go install: $(ls "$state")"
run 0 py_tool status --state "$state" --now "$now"
grep -q "activation: active" "$scratch/out" || fail "python status of Go's install: $(cat "$scratch/out")"
run 0 java_tool status --state "$state" --now "$now"
run 0 java_tool return --state "$state" --now "$now"
grep -qx "$(vector return)" "$scratch/out" || fail "java return of Go's install: $(cat "$scratch/out")"
[[ -f $state/returned.json && ! -e $state/activation.json ]] || fail "java return: $(ls "$state")"
run 2 go_tool status --state "$state" --now "$now"

state="$scratch/shared-2"
run 0 java_tool request --from "$(vector code)" --fingerprint "$(vector fingerprint)" --state "$state"
run 0 py_tool install "$(vector jws)" --jwks "$scratch/vendor-jwks.json" --state "$state" --now "$now"
run 0 go_tool status --state "$state" --now "$now"
grep -q "active until" "$scratch/out" || fail "go status of Python's install: $(cat "$scratch/out")"
run 0 go_tool return --state "$state" --now "$now"
grep -q "return code: $(vector return)" "$scratch/out" || fail "go return of Python's install: $(cat "$scratch/out")"
run 1 py_tool status --state "$state" --now "$now"
grep -q "return code: $(vector return)" "$scratch/out" || fail "python status after Go's return: $(cat "$scratch/out")"
echo "activation state: a directory written by one SDK's program is read by the others (request, install, status, return)"
