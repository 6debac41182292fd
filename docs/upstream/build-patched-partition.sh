#!/bin/sh
# A patched kafka.cluster.Partition for a release, without Gradle: Kafka's own source of
# core/src/main/scala/kafka/cluster/Partition.scala at the commit the release was built from, a
# unified diff applied to it, compiled with scalac (2.13) against the release's own jars, and
# jarred — a jar to put FIRST on the brokers' class path:
#   --adapter kafka-cluster,classpath=OUT_JAR      (isrcheck, docs/real-kafka.md)
#   CLASSPATH=OUT_JAR bin/kafka-server-start.sh …  (any broker: kafka-run-class.sh appends libs/*)
#
#   build-patched-partition.sh KAFKA_HOME PATCH|- OUT_JAR [KAFKA_GIT_DIR]
#
# PATCH "-" compiles the source unchanged (the control: it must behave as the release's jar).
# KAFKA_GIT_DIR is any clone of apache/kafka (a bare one is fine), default $KAFKA_GIT_DIR. The
# commit is KAFKA_HOME/COMMIT when the build recorded one, else the tag of the release's version
# (the name of libs/kafka_2.13-X.Y.Z.jar). The Scala compiler: $SCALA_COMPILER_JARS (a class path
# holding scala-compiler, scala-library and scala-reflect 2.13), else the jars of an installed
# pyspark (whose scala-compiler 2.13.18 built /work/shared/kafka's 3.9.0, its BUILD.md). A Kafka
# checkout's Gradle build replaces all of this with `./gradlew :core:jar`.
set -eu
if [ $# -lt 3 ]; then
    echo "usage: $0 KAFKA_HOME PATCH|- OUT_JAR [KAFKA_GIT_DIR]" >&2
    exit 2
fi
home=$1 patch_file=$2 out=$3 git_dir=${4:-${KAFKA_GIT_DIR:-}}
file=core/src/main/scala/kafka/cluster/Partition.scala
if [ ! -d "$home/libs" ]; then
    echo "$0: $home is not a Kafka home (no libs/)" >&2
    exit 2
fi
if [ -z "$git_dir" ] || ! git --git-dir="$git_dir" rev-parse --git-dir >/dev/null 2>&1; then
    echo "$0: no apache/kafka git repository (give KAFKA_GIT_DIR; got '${git_dir}')" >&2
    exit 2
fi
if [ "$patch_file" != "-" ] && [ ! -f "$patch_file" ]; then
    echo "$0: no patch file $patch_file" >&2
    exit 2
fi
scala_jars=${SCALA_COMPILER_JARS:-}
if [ -z "$scala_jars" ]; then
    jars=$(python3 -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))' 2>/dev/null || true)
    if [ -n "$jars" ] && [ -f "$(ls "$jars"/scala-compiler-2.13.*.jar 2>/dev/null | head -n 1)" ]; then
        scala_jars=$(ls $jars/scala-compiler-2.13.*.jar $jars/scala-library-2.13.*.jar $jars/scala-reflect-2.13.*.jar | tr '\n' ':')
    fi
fi
if [ -z "$scala_jars" ]; then
    echo "$0: no Scala 2.13 compiler (set SCALA_COMPILER_JARS, or pip install pyspark)" >&2
    exit 2
fi
if [ -f "$home/COMMIT" ]; then
    commit=$(tr -d ' \n' < "$home/COMMIT")
else
    jar_name=$(basename "$(ls "$home"/libs/kafka_2.13-*.jar | grep -v -e -test -e -sources | head -n 1)")
    commit=$(echo "$jar_name" | sed -E 's/^kafka_2\.13-(.*)\.jar$/\1/')
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src/$(dirname "$file")" "$work/classes"
git --git-dir="$git_dir" show "$commit:$file" > "$work/src/$file"
if [ "$patch_file" != "-" ]; then
    patch --quiet --batch -p1 -d "$work/src" < "$patch_file"
fi
java -Xss8m -Xmx1g -cp "$scala_jars" scala.tools.nsc.Main -nowarn -release 17 -d "$work/classes" \
    -classpath "$home/libs/*" "$work/src/$file" >&2
if [ ! -f "$work/classes/kafka/cluster/Partition.class" ]; then
    echo "$0: scalac failed" >&2
    exit 1
fi
out_dir=$(cd "$(dirname "$out")" && pwd)
(cd "$work/classes" && jar --create --file "$out_dir/$(basename "$out")" kafka)
echo "$out: kafka.cluster.Partition of $commit$( [ "$patch_file" = "-" ] || echo " with $(basename "$patch_file")")" \
    "($(cd "$work/classes" && find kafka -name '*.class' | wc -l) classes)"
