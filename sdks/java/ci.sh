#!/usr/bin/env bash
# Builds the Java SDK with javac and jar against Debian's jars and runs its tests (JUnit 5, Debian's
# junit5 package) offline: the conformance vectors of sdks/conformance (leases, webhooks, offline
# activation), the lease verifier, offline activation, the keyward-activate program (also through
# keyward-activate.sh), the webhook verifier and the session against a local stub. Runnable from any
# directory.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="$here/build"
java_dir=/usr/share/java
jackson="$java_dir/jackson-databind.jar:$java_dir/jackson-core.jar:$java_dir/jackson-annotations.jar"
junit="$java_dir/junit-platform-console-standalone.jar"

for jar in "$java_dir/jackson-databind.jar" "$java_dir/jackson-core.jar" "$java_dir/jackson-annotations.jar"; do
  [[ -f $jar ]] || { echo "java sdk: $jar is missing (apt-get install -y libjackson2-databind-java)" >&2; exit 1; }
done
[[ -f $junit ]] || { echo "java sdk: $junit is missing (apt-get install -y junit5)" >&2; exit 1; }

rm -rf "$build/classes" "$build/test-reports"
mkdir -p "$build/classes/main" "$build/classes/test"

echo "java sdk: compiling the library"
javac --release 17 -encoding UTF-8 -Xlint:all -Werror -d "$build/classes/main" -cp "$jackson" \
  $(find "$here/src/main/java" -name '*.java' | sort)
jar --create --file "$build/keyward-java-0.1.0.jar" -C "$build/classes/main" .

echo "java sdk: compiling the tests"
javac --release 17 -encoding UTF-8 -Xlint:all -Xlint:-try -Werror -d "$build/classes/test" \
  -cp "$build/classes/main:$jackson:$junit" $(find "$here/src/test/java" -name '*.java' | sort)

echo "java sdk: running the tests"
set +e
java -Dkeyward.conformance="$here/../conformance" -jar "$junit" \
  --disable-banner --disable-ansi-colors --details=tree --fail-if-no-tests \
  --class-path "$build/classes/test:$build/classes/main:$jackson" \
  --scan-class-path "$build/classes/test" \
  --reports-dir "$build/test-reports" | tee "$build/test-output.txt"
status=${PIPESTATUS[0]}
set -e
count() { grep -E "^\[ *[0-9]+ tests $1" "$build/test-output.txt" | grep -oE '[0-9]+' | head -1; }
passed=$(count successful || echo 0)
failed=$(count failed || echo 0)
echo "java sdk: ${passed:-0} passed, ${failed:-0} failed"
exit "$status"
