#!/usr/bin/env bash
# The scaling run that a 2-CPU machine cannot do: the key micro-benchmarks of both backends, in both
# regimes, and HotKey (every thread looks up one pair), at 1 thread and at each larger thread count
# the machine has cores for (4, 8, 16 by default),
# then one table (`java -jar mbcache-bench.jar table`) whose "Scaling" section puts each thread count's
# ns/op beside the 1-thread figure. Short iterations and one fork, so that it fits in about 6 minutes
# on 16 cores; read its ratios as a first look, and re-run a row with `jmh ... -f 3` before quoting it.
#
#   bash mbcache-bench/many-cores.sh                  # 1 4 8 16 threads (those above nproc are skipped)
#   THREADS="1 2 4" FORKS=3 bash mbcache-bench/many-cores.sh
#
# Results: mbcache-bench/results/many-cores/micro-t<N>.json, and results-table.md beside them.
# Nothing in the build or the tests runs this.
set -euo pipefail
cd "$(dirname "$0")/.."
JAR=mbcache-bench/target/mbcache-bench.jar
if [ ! -f "$JAR" ]; then
    mvn -B -q package -DskipTests -Djcstress.skip=true -Dmaven.javadoc.skip=true
fi
OUT=mbcache-bench/results/many-cores
mkdir -p "$OUT"
CPUS=$(nproc)
THREADS=${THREADS:-"1 4 8 16"}
FORKS=${FORKS:-1}
files=()
for t in $THREADS; do
    if [ "$t" -gt "$CPUS" ]; then
        echo "skipping -t $t: this machine has $CPUS CPUs"
        continue
    fi
    java -jar "$JAR" jmh 'Micro\.(findFirstHit|findFirstMiss|getRelease|createDuplicate|createNew|churn)$' \
        -p backend=mbcache,caffeine -p bound=at,below -p load=full -p keys=uniform \
        -f "$FORKS" -wi 1 -w 300ms -i 3 -r 300ms -t "$t" -prof gc \
        -jvmArgs "-Xms4g -Xmx4g -XX:+AlwaysPreTouch" -rf json -rff "$OUT/micro-t$t.json"
    files+=("$OUT/micro-t$t.json")
    # One hot key that every thread looks up: what threads sharing one entry cost each other.
    java -jar "$JAR" jmh 'HotKey\.' \
        -f "$FORKS" -wi 1 -w 300ms -i 3 -r 300ms -t "$t" -prof gc \
        -jvmArgs "-Xms4g -Xmx4g -XX:+AlwaysPreTouch" -rf json -rff "$OUT/hotkey-t$t.json"
    files+=("$OUT/hotkey-t$t.json")
done
java -Dmbcache.results="$OUT" -jar "$JAR" table "${files[@]}"
