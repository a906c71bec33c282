#!/usr/bin/env bash
# keyward-activate, the Java SDK's offline-activation program (dev.keyward.tools.Activate):
#   keyward-activate.sh request --app KEY --asset NUM --product ID --days N [--fingerprint FP] [--state DIR]
#   keyward-activate.sh install ANSWER... [--jwks FILE] [--state DIR]
#   keyward-activate.sh status | return
# Runs the library jar ci.sh built when it is newer than every source; else compiles the library
# (javac against Debian's Jackson jars) into build/tool-classes first, once.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
java_dir=/usr/share/java
jackson="$java_dir/jackson-databind.jar:$java_dir/jackson-core.jar:$java_dir/jackson-annotations.jar"
for jar in "$java_dir/jackson-databind.jar" "$java_dir/jackson-core.jar" "$java_dir/jackson-annotations.jar"; do
  [[ -f $jar ]] || { echo "keyward-activate: $jar is missing (apt-get install -y libjackson2-databind-java)" >&2; exit 1; }
done
sources="$here/src/main/java"
jar="$here/build/keyward-java-0.1.0.jar"
if [[ -f $jar && -z $(find "$sources" -name '*.java' -newer "$jar" | head -1) ]]; then
  classes="$jar"
else
  classes="$here/build/tool-classes"
  built="$classes/dev/keyward/tools/Activate.class"
  if [[ ! -f $built || -n $(find "$sources" -name '*.java' -newer "$built" | head -1) ]]; then
    mkdir -p "$here/build"
    fresh="$(mktemp -d "$here/build/.tool-classes.XXXXXX")"
    javac --release 17 -encoding UTF-8 -d "$fresh" -cp "$jackson" $(find "$sources" -name '*.java') >&2
    rm -rf "$classes" && mv "$fresh" "$classes"
  fi
fi
exec java -cp "$classes:$jackson" dev.keyward.tools.Activate "$@"
