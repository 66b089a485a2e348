#!/usr/bin/env bash
# scale-emulator.sh measures table-wide work on the standalone emulator
# (gcloud's cbtemulator): for tables of 1M and 5M cells (200,000 and
# 1,000,000 rows of 5 cells of 100 B), the wall time and peak RSS of
#
#   cbt count                         (the reference: one stream, counts rows)
#   cellttl ensure (dry run)          (a loss scan: f to default:24h)
#   cellttl stats                     (an audit, values stripped)
#
# each run three times, the median reported, the emulator restarted per
# size. It prints a Markdown table (docs/benchmarks.md, "Table-wide work").
#
#   scripts/scale-emulator.sh            # 1M and 5M cells: ~10 minutes
#   SIZES="200000" scripts/scale-emulator.sh
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${SIZES:-"200000 1000000"}
WORKERS=${WORKERS:-8}

sdk=$(dirname "$(dirname "$(readlink -f "$(command -v gcloud)")")")
emulator="$sdk/platform/bigtable-emulator/cbtemulator"
[ -x "$emulator" ] || { echo "no cbtemulator under $sdk" >&2; exit 1; }
command -v cbt >/dev/null || { echo "no cbt on the PATH" >&2; exit 1; }

bin=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$bin"' EXIT
go -C cmd/cellttl build -o "$bin/cellttl" .  # a module of its own
go build -o "$bin/loadtable" ./cmd/loadtable
export BIGTABLE_EMULATOR_HOST=127.0.0.1:8087
cbt=(cbt -project p -instance i -creds /dev/null)
on=(-project p -instance i -table t)

# measure NAME CMD... prints "seconds maxrss_kib" of one run.
measure() {
	/usr/bin/time -f '%e %M' -o "$bin/time" "$@" >"$bin/out" 2>"$bin/err" || true
	tail -1 "$bin/time" # a failing command adds a line before
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "| cells | command | wall time (median of 3) | peak RSS | output |"
echo "|---:|---|---:|---:|---|"
for rows in $SIZES; do
	"$emulator" -host 127.0.0.1 -port 8087 >/dev/null 2>&1 &
	pid=$!
	for _ in $(seq 50); do "${cbt[@]}" ls >/dev/null 2>&1 && break; sleep 0.1; done
	"$bin/loadtable" -project p -instance i -table t -rows "$rows" -cells 5 -value 100
	cells=$((rows * 5))
	for cmd in "cbt count" "cellttl ensure" "cellttl stats"; do
		case "$cmd" in
		"cbt count") run=("${cbt[@]}" count t) ;;
		"cellttl ensure") run=("$bin/cellttl" ensure "${on[@]}" -family f=default:24h -workers "$WORKERS" -progress=false) ;;
		"cellttl stats") run=("$bin/cellttl" stats "${on[@]}" -family f=default:24h -workers "$WORKERS" -progress=false) ;;
		esac
		: >"$bin/runs"
		for _ in 1 2 3; do measure "${run[@]}" >>"$bin/runs"; done
		wall=$(awk '{ print $1 }' "$bin/runs" | median)
		rss=$(awk '{ print $2 }' "$bin/runs" | median)
		summary=$(grep -E '^[0-9]+$|scan:|^ *f ' "$bin/out" | tr '\n' ' ' | sed 's/  */ /g' | cut -c1-120)
		echo "| $cells | $cmd | ${wall} s | $((rss / 1024)) MiB | $summary |"
	done
	kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
done
