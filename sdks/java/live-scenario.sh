#!/usr/bin/env bash
# Runs the Java SDK's live scenario (sdks/conformance/README.md) for scripts/sdk-live.ts: compiles
# the library and the scenario program (no test framework needed) when a source changed, then runs it.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
java_dir=/usr/share/java
jackson="$java_dir/jackson-databind.jar:$java_dir/jackson-core.jar:$java_dir/jackson-annotations.jar"
classes="$here/build/scenario-classes"
program="$here/src/test/java/dev/keyward/live/LiveScenario.java"
built="$classes/dev/keyward/live/LiveScenario.class"
if [[ ! -f $built || -n $(find "$here/src/main/java" "$program" -name '*.java' -newer "$built") ]]; then
  rm -rf "$classes" && mkdir -p "$classes"
  javac --release 17 -encoding UTF-8 -d "$classes" -cp "$jackson" \
    $(find "$here/src/main/java" -name '*.java') "$program" >&2
fi
exec java -cp "$classes:$jackson" dev.keyward.live.LiveScenario
