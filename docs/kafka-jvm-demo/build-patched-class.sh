#!/bin/sh
# The Kafka developer's loop without Gradle (docs/kafka-jvm.md): Kafka's own source of
# ReplicationControlManager.java at the commit a release was built from, a unified diff applied to
# it, compiled with javac against that release's jars, and jarred — a jar to put ahead of the
# release's jars with `--adapter "kafka-jvm,classpath=OUT_JAR:KAFKA_HOME/libs/*"`.
#
#   build-patched-class.sh KAFKA_HOME PATCH|- OUT_JAR [KAFKA_GIT_DIR]
#
# PATCH "-" compiles the source unchanged (the control: it must behave as the release's jar).
# KAFKA_GIT_DIR is any clone of apache/kafka (a bare one is fine), default $KAFKA_GIT_DIR. The
# commit is KAFKA_HOME/COMMIT when the build recorded one, else the tag of the release's version
# (the name of libs/kafka-metadata-X.Y.Z.jar). A Kafka checkout's Gradle build replaces all of
# this with `./gradlew :metadata:jar` and classpath=metadata/build/libs/kafka-metadata-*.jar.
set -eu
if [ $# -lt 3 ]; then
    echo "usage: $0 KAFKA_HOME PATCH|- OUT_JAR [KAFKA_GIT_DIR]" >&2
    exit 2
fi
home=$1 patch_file=$2 out=$3 git_dir=${4:-${KAFKA_GIT_DIR:-}}
file=metadata/src/main/java/org/apache/kafka/controller/ReplicationControlManager.java
if [ -z "$git_dir" ] || ! git --git-dir="$git_dir" rev-parse --git-dir >/dev/null 2>&1; then
    echo "$0: no apache/kafka git repository (give KAFKA_GIT_DIR; got '${git_dir}')" >&2
    exit 2
fi
if [ -f "$home/COMMIT" ]; then
    commit=$(tr -d ' \n' < "$home/COMMIT")
else
    jar_name=$(basename "$(ls "$home"/libs/kafka-metadata-*.jar | head -n 1)")
    commit=$(echo "$jar_name" | sed -E 's/^kafka-metadata-(.*)\.jar$/\1/')
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src/$(dirname "$file")" "$work/classes"
git --git-dir="$git_dir" show "$commit:$file" > "$work/src/$file"
if [ "$patch_file" != "-" ]; then
    patch --quiet --batch -p1 -d "$work/src" < "$patch_file"
fi
javac -nowarn -encoding UTF-8 -proc:none -d "$work/classes" -cp "$home/libs/*" "$work/src/$file" 2>&1 \
    | grep -v '^Note: ' >&2 || true
if [ ! -f "$work/classes/org/apache/kafka/controller/ReplicationControlManager.class" ]; then
    echo "$0: javac failed" >&2
    exit 1
fi
out_dir=$(cd "$(dirname "$out")" && pwd)
(cd "$work/classes" && jar --create --file "$out_dir/$(basename "$out")" org)
echo "$out: ReplicationControlManager of $commit$( [ "$patch_file" = "-" ] || echo " with $(basename "$patch_file")")"
