#!/usr/bin/env bash
# Builds the Java SDK with javac and jar against Debian's jars and runs its tests (JUnit 5, Debian's
# junit5 package) offline: the conformance vectors of sdks/conformance (leases, relay leases,
# webhooks, offline activation), the lease verifier, offline activation, the keyward-activate
# program (also through keyward-activate.sh), the webhook verifier and the session against a local
# stub. Runnable from any directory.
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
version=$(sed -n 's:^  <version>\(.*\)</version>$:\1:p' "$here/pom.xml" | head -1)
artifact="keyward-java-$version"
# The module name Java 9+ programs require (requires dev.keyward;), as pom.xml's jar plugin sets it.
printf 'Automatic-Module-Name: dev.keyward\n' >"$build/manifest.txt"
jar --create --file "$build/$artifact.jar" --manifest "$build/manifest.txt" -C "$build/classes/main" .

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
[[ $status -eq 0 ]] || exit "$status"

# Installed as Maven installs it: the jar and its pom in a local repository's layout
# (groupId/artifactId/version/), in a scratch folder outside the repository; then a program
# compiled and run against that repository's jar alone (its one dependency, jackson-databind, from
# Debian), on the class path and as a named module requiring dev.keyward.
echo "java sdk: installing into a Maven repository layout and building a consumer against it"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
group=$(sed -n 's:^  <groupId>\(.*\)</groupId>$:\1:p' "$here/pom.xml" | head -1)
name=$(sed -n 's:^  <artifactId>\(.*\)</artifactId>$:\1:p' "$here/pom.xml" | head -1)
installed="$scratch/m2/repository/${group//.//}/$name/$version"
mkdir -p "$installed"
cp "$build/$artifact.jar" "$installed/$name-$version.jar"
cp "$here/pom.xml" "$installed/$name-$version.pom"
(cd "$scratch" && jar --extract --file "$installed/$name-$version.jar" META-INF/MANIFEST.MF)
[[ $(tr -d '\r' <"$scratch/META-INF/MANIFEST.MF" | sed -n 's/^Automatic-Module-Name: //p') == dev.keyward ]] ||
  { echo "java sdk: the jar's manifest names no Automatic-Module-Name dev.keyward" >&2; exit 1; }
# The pom's compile dependencies are the ones the consumer is given: jackson-databind alone.
dependencies=$(tr -d ' \n' <"$installed/$name-$version.pom" | grep -o '<dependency>.*</dependency>' |
  sed 's:</dependency>:&\n:g' | grep -v '<scope>test</scope>' | sed -n 's:.*<artifactId>\([^<]*\)</artifactId>.*:\1:p')
[[ $dependencies == jackson-databind ]] ||
  { echo "java sdk: the pom's dependencies are '$dependencies', not jackson-databind" >&2; exit 1; }
cp -R "$here/consumer" "$scratch/consumer"
cd "$scratch/consumer"
javac --release 17 -Xlint:all -Werror -d classes -cp "$installed/$name-$version.jar:$jackson" \
  src/com/example/app/Consumer.java
java -cp "classes:$installed/$name-$version.jar:$jackson" com.example.app.Consumer
javac --release 17 -Xlint:all -Xlint:-requires-automatic -Werror -d modular \
  --module-path "$installed/$name-$version.jar:$jackson" module/module-info.java src/com/example/app/Consumer.java
java --module-path "modular:$installed/$name-$version.jar:$jackson" -m com.example.app/com.example.app.Consumer
echo "java sdk: a consumer compiled against $group:$name:$version from a local Maven repository layout runs"
