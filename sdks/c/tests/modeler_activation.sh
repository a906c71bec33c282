#!/usr/bin/env bash
# The modeler example's offline activation without a server (CTest modeler_activation):
#   modeler_activation.sh MODELER TEST_ACTIVATION
# Answers are signed by `test_activation --answer` with a key of its own, shipped to the machine as
# the vendor's JWKS (--jwks). Each command's output must fit its expected lines exactly, `*` any
# text (the ids and times), a line of "..." any lines, and its exit status must be the expected one.
set -uo pipefail
modeler=$1
helper=$2
state=$(mktemp -d)
vendor=$(mktemp -d)
trap 'rm -rf "$state" "$vendor"' EXIT
export MODELER_STATE_DIR=$state KEYWARD_APP_KEY=kw_test_app
failures=0

# expect STATUS COMMAND... <<< "expected lines"
expect() {
  local want_status=$1
  shift
  local wanted output status
  wanted=$(cat)
  output=$("$@" 2>&1)
  status=$?
  local -a want_lines got_lines
  mapfile -t want_lines <<<"$wanted"
  mapfile -t got_lines <<<"$output"
  local ok=1 at=0 skipping=0 found j
  [[ $status -eq $want_status ]] || ok=0
  for want in "${want_lines[@]}"; do
    if [[ $want == "..." ]]; then
      skipping=1
      continue
    fi
    found=-1
    for ((j = at; j < ${#got_lines[@]}; j++)); do
      # shellcheck disable=SC2053 # the expected line is a pattern
      if [[ ${got_lines[$j]} == $want ]]; then
        found=$j
        break
      fi
      [[ $skipping -eq 1 ]] || break
    done
    if [[ $found -lt 0 ]]; then
      ok=0
      break
    fi
    at=$((found + 1))
    skipping=0
  done
  [[ $skipping -eq 1 || $at -eq ${#got_lines[@]} ]] || ok=0
  if [[ $ok -eq 1 ]]; then
    echo "ok   $*"
  else
    failures=$((failures + 1))
    printf 'FAIL %s\n  exit %s (expected %s)\n  got:\n%s\n  expected:\n%s\n' "$*" "$status" "$want_status" \
      "$(sed 's/^/    /' <<<"$output")" "$(sed 's/^/    /' <<<"$wanted")"
  fi
  LAST_OUTPUT=$output
}

expect 0 "$modeler" request 8000000001 demo-simulator --days 7 <<EOF
activation request for 7 days of demo-simulator on 8000000001, for this machine
request code: A80G0M-*
request file: $state/activation-request.json
take either to Keyward, then: modeler activate ANSWER
EOF
answer=$("$helper" --answer "$state/activation-request.json" "$vendor")
grep -q '"code":"A80G0M-' "$state/activation-request.json" || {
  echo "FAIL the request file holds no code"
  failures=$((failures + 1))
}

expect 2 "$modeler" activate "$answer" <<EOF
no key set in $state/jwks.json: give the vendor's with --jwks FILE
EOF

# One character of group 5 typed wrong, the code given as several arguments.
mistyped="${answer:0:28}$([[ ${answer:28:1} == Z ]] && echo Y || echo Z)${answer:29}"
# shellcheck disable=SC2086 # one argument a group
expect 2 "$modeler" activate ${mistyped//-/ } --jwks "$vendor/jwks.json" <<EOF
activation refused (malformed): group 5 does not check: a character in it is mistyped
group 5 is mistyped: type it again
EOF

# shellcheck disable=SC2086
expect 0 "$modeler" activate ${answer//-/ } --jwks "$vendor/jwks.json" <<EOF
activated: lease 01938f2e-7c1a-7000-8000-00000000b002 for demo-simulator on 8000000001
valid until * UTC (bound by offline-days)
activation kept in $state/activation.txt
EOF
[[ -f $state/jwks.json ]] || {
  echo "FAIL the vendor's key set was not kept"
  failures=$((failures + 1))
}

expect 2 "$modeler" request 8000000001 demo-simulator --days 7 <<EOF
an activation is kept in $state/activation.txt: modeler return first
EOF

expect 0 "$modeler" run-offline demo-simulator --seconds 2 <<EOF
running offline until * UTC: lease 01938f2e-7c1a-7000-8000-00000000b002 for demo-simulator on 8000000001
working (Ctrl-C to stop)
solve 1: 1 consumed locally
solve 2: 2 consumed locally
stopped after 2 s; the activation holds until * UTC
EOF

expect 2 "$modeler" run-offline demo-viewer --seconds 1 <<EOF
the activation is for demo-simulator, not demo-viewer
EOF

expect 0 "$modeler" return <<EOF
activation of lease 01938f2e-7c1a-7000-8000-00000000b002 deleted from this machine
return code: B00G3M-4WF5S5-Y1MW0V-0G000D-*
enter it in Keyward to free the seat now, where the app allows an early return
EOF
[[ ! -e $state/activation.txt && ! -e $state/activation-request.json ]] || {
  echo "FAIL return left the activation behind"
  failures=$((failures + 1))
}

expect 2 "$modeler" return <<EOF
no activation to return in $state/activation.txt
EOF
expect 2 "$modeler" run-offline demo-simulator --seconds 1 <<EOF
no activation in $state/activation.txt: modeler request, then modeler activate
EOF
expect 2 "$modeler" activate "$answer" <<EOF
no activation request in $state/activation-request.json: modeler request first
EOF

# The answer to an older request: refused.
"$modeler" request 8000000001 demo-simulator --days 7 >/dev/null
older=$("$helper" --answer "$state/activation-request.json" "$vendor")
"$modeler" request 8000000001 demo-simulator --days 7 --app kw_test_app >/dev/null
expect 2 "$modeler" activate "$older" --jwks "$vendor/jwks.json" <<EOF
activation refused (request): it answers another activation request
EOF

# An activation that ends while the program runs, then is returned expired. The key set of the
# older answer is replaced by this one's: --jwks again.
short=$("$helper" --answer "$state/activation-request.json" "$vendor" 2)
expect 0 "$modeler" activate "$short" --jwks "$vendor/jwks.json" <<EOF
activated: lease 01938f2e-7c1a-7000-8000-00000000b002 for demo-simulator on 8000000001
valid until * UTC (bound by offline-days)
activation kept in $state/activation.txt
EOF
expect 3 "$modeler" run-offline demo-simulator --seconds 5 <<EOF
running offline until * UTC: lease 01938f2e-7c1a-7000-8000-00000000b002 for demo-simulator on 8000000001
working (Ctrl-C to stop)
...
activation refused (expired): it has expired
EOF
expect 0 "$modeler" return <<EOF
the activation had expired: deleted; its seat was freed at its expiry
EOF

[[ $failures -eq 0 ]] && echo "modeler activation: all passed" || echo "modeler activation: $failures failed"
exit $((failures > 0))
