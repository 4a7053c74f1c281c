#!/usr/bin/env bash
# Judges the comparisons study.sh left under $WORK/out with the v8inline built
# now (compare reading the side directories, as `v8inline bench` ends), at
# thresholds of 3, 5 and 10 %: the gate's exit status, the annotations, and each
# benchmark's verdict, change, interval and minimum detectable change.
# Writes testdata/bench46/results/summary.tsv and prints the counts.
#
#   testdata/bench46/judge.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
v8inline=${V8INLINE:-$repo/target/release/v8inline}
work=${WORK:-/tmp/v8inline-bench46}
results=${RESULTS:-$here/results}
out_root=${OUT_ROOT:-$work/out}
summary=$results/summary.tsv
printf 'comparison\tthreshold\trounds\twall_s\tstopped\tgate_exit\tannotations\tfirst_annotated\tbenchmark\tverdict\tchange\tinterval\tminimum_detectable\n' >"$summary"
for out in "$out_root"/*/; do
  name=$(basename "$out")
  [ -f "$out/bench.json" ] || continue
  rounds=$(jq '.rounds | length' "$out/bench.json")
  stopped=$(jq -r '.stopped // "unfinished"' "$out/bench.json")
  wall=$(sed -n 's/^wall \([0-9]*\) s$/\1/p' "$results/$name.stderr" 2>/dev/null || true)
  for threshold in 3 5 10; do
    status=0
    "$v8inline" compare "$out/base" "$out/head" --threshold "$threshold" --fail-on-regression --source-root "$work" \
      >"$work/judged.txt" || status=$?
    "$v8inline" compare "$out/base" "$out/head" --threshold "$threshold" --format github --source-root "$work" \
      >"$work/annotations.txt"
    annotations=$(grep -c '^::warning' "$work/annotations.txt" || true)
    # The function the first annotation names, and where.
    first=$(sed -n '1s/^::warning file=\([^,]*\),line=\([0-9]*\),.*::\([^ ]*\) .*$/\3 \1:\2/p' "$work/annotations.txt")
    # `benchmark "NAME": 3 → 3 runs, … +4.1% (interval -2.0% to +9.9%, minimum detectable change 12.0%): undecided`
    sed -n 's/^benchmark "\([^"]*\)": .*, \([-+][0-9.]*%\) (interval \([^)]*\), minimum detectable change \([0-9.]*%\)): \(.*\)$/\1\t\5\t\2\t\3\t\4/p' \
      "$work/judged.txt" | while IFS= read -r line; do
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$threshold" "$rounds" "$wall" "$stopped" "$status" "$annotations" "$first" "$line"
    done >>"$summary"
  done
done
python3 - "$summary" <<'PYTHON'
import csv, sys
from collections import defaultdict
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
groups = defaultdict(dict)
for row in rows:
    kind = row["comparison"].rsplit("-", 1)[0]
    groups[(kind, row["threshold"])].setdefault(row["comparison"], []).append(row)
for (kind, threshold), comparisons in sorted(groups.items()):
    gate = sum(rows[0]["gate_exit"] == "1" for rows in comparisons.values())
    annotated = sum(rows[0]["annotations"] != "0" for rows in comparisons.values())
    firsts = sorted({rows[0]["first_annotated"] for rows in comparisons.values() if rows[0]["first_annotated"]})
    verdicts = defaultdict(int)
    for rows in comparisons.values():
        for row in rows:
            verdicts[row["verdict"]] += 1
    mdc = sorted(float(row["minimum_detectable"].rstrip("%")) for rows in comparisons.values() for row in rows)
    walls = sorted(int(rows[0]["wall_s"]) for rows in comparisons.values() if rows[0]["wall_s"])
    rounds = sorted(int(rows[0]["rounds"]) for rows in comparisons.values())
    print(f"{kind} at ±{threshold}%: {len(comparisons)} comparisons, gate exit 1 in {gate}, annotated {annotated} (first: {', '.join(firsts) or '-'}); "
          f"benchmark verdicts {dict(verdicts)}; minimum detectable change median {mdc[len(mdc)//2]:.1f}% "
          f"({mdc[0]:.1f}-{mdc[-1]:.1f}%); rounds {rounds[0]}-{rounds[-1]}; wall {walls[0] if walls else '?'}-{walls[-1] if walls else '?'} s")
PYTHON

# Two comparisons kept whole (as compare reads them: runs.json, each run's
# recording.json, benchmarks.json and gzipped per-benchmark profiles) for
# tests/bench.rs: the first unchanged one and the first at 25 %.
for name in ${KEEP:-unchanged-01 slower25-01}; do
  kept=$results/$name
  rm -rf "$kept"
  cp "$out_root/$name/bench.json" "$results/$name.bench.json"
  for side in base head; do
    mkdir -p "$kept/$side"
    cp "$out_root/$name/$side/runs.json" "$kept/$side/"
    for run in "$out_root/$name/$side"/run-*/; do
      run_name=$(basename "$run")
      mkdir -p "$kept/$side/$run_name"
      cp "$run/recording.json" "$run/benchmarks.json" "$kept/$side/$run_name/"
      for folded in "$run"/benchmarks/*/profile.folded; do
        slug=$(basename "$(dirname "$folded")")
        mkdir -p "$kept/$side/$run_name/benchmarks/$slug"
        gzip -9n <"$folded" >"$kept/$side/$run_name/benchmarks/$slug/profile.folded.gz"
      done
    done
  done
done
