#!/usr/bin/env bash
# sweep-emulator.sh is the evidence for sweeps on the standalone emulator
# (gcloud's cbtemulator, a separate process whose GC runs): while sessions
# are written with lifetimes of 10-40 s and 40% of them renewed (by Touch,
# up to three times), `cellttl sweep -every 10s -granularity row` runs over
# the family sess=grace:1h:onesecond, and is killed (SIGKILL) and restarted
# twice. Then it judges the events against the sessions written
# (internal/sweepcheck): every session reported, at its final expiry, none
# early, none twice but by the run after a kill (the batch in flight), and
# each within one period + margin + a scan of its expiry. With DELETE=1
# the sweep deletes what it reported, and afterwards neither cbt read nor
# a raw read finds a cell that expired before the last round.
#
# The families are created with the table (ensure -create) and then given
# their policy again with cbt: the emulator starts its GC loop only once a
# family is modified, so GC runs during the whole test.
#
#   scripts/sweep-emulator.sh                 # ~4 minutes
#   DELETE=1 SESSIONS=2000 scripts/sweep-emulator.sh
#   SESSIONS=200 SPAN=30s PERIOD=3s MAX_LIFE=15s scripts/sweep-emulator.sh   # CI: ~1 minute
set -euo pipefail
cd "$(dirname "$0")/.."
SESSIONS=${SESSIONS:-1000}
SPAN=${SPAN:-120s}      # sessions start over this span
PERIOD=${PERIOD:-10s}   # the sweep's period
MIN_LIFE=${MIN_LIFE:-10s}
MAX_LIFE=${MAX_LIFE:-40s}
DELETE=${DELETE:-0}
PORT=${PORT:-8089}

sdk=$(dirname "$(dirname "$(readlink -f "$(command -v gcloud)")")")
emulator="$sdk/platform/bigtable-emulator/cbtemulator"
[ -x "$emulator" ] || { echo "no cbtemulator under $sdk" >&2; exit 1; }

dir=$(mktemp -d)
emu= sweeper= loader=
cleanup() {
	for p in $sweeper $loader $emu; do kill "$p" 2>/dev/null || true; done
	rm -rf "$dir"
}
trap cleanup EXIT
go build -o "$dir/cellttl" ./cmd/cellttl
go build -o "$dir/sweepcheck" ./internal/sweepcheck
export BIGTABLE_EMULATOR_HOST=127.0.0.1:$PORT
cbt=(cbt -project p -instance i -creds /dev/null)
fam=sess=grace:1h:onesecond

"$emulator" -host 127.0.0.1 -port "$PORT" >"$dir/emulator.log" 2>&1 &
emu=$!
for _ in $(seq 50); do "${cbt[@]}" ls >/dev/null 2>&1 && break; sleep 0.1; done
"$dir/cellttl" ensure -project p -instance i -table sessions -family "$fam" -create -apply >/dev/null
# Modify the family once, so that the emulator's GC loop runs.
"${cbt[@]}" setgcpolicy sessions sess maxage=1h >/dev/null
"${cbt[@]}" ls sessions

del=()
[ "$DELETE" = 1 ] && del=(-delete)
# start_sweep RUN starts the sweep, its events stamped into events.jsonl.
start_sweep() {
	( "$dir/cellttl" sweep -project p -instance i -table sessions -family "$fam" \
		-granularity row -every "$PERIOD" -checkpoint "$dir/sweep.json" \
		-since "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "${del[@]}" -format json -progress=false \
		2>>"$dir/sweep.log" | "$dir/sweepcheck" stamp -run "$1" >>"$dir/events.jsonl" ) &
	sweeper=$!
}
now() { date -u +%Y-%m-%dT%H:%M:%S.%NZ; }

start_sweep 0
"$dir/sweepcheck" load -table sessions -family sess -sessions "$SESSIONS" -span "$SPAN" \
	-min-life "$MIN_LIFE" -max-life "$MAX_LIFE" -ledger "$dir/ledger.json" &
loader=$!
span_s=${SPAN%s}
: >"$dir/gaps"
for run in 1 2; do
	sleep $((span_s / 3 + RANDOM % 7))
	# SIGKILL the cellttl process itself (not the subshell): no clean end.
	pkill -KILL -f "$dir/cellttl sweep" || true
	down=$(now)
	wait "$sweeper" 2>/dev/null || true
	sleep 3
	echo "$down $(now)" >>"$dir/gaps"
	echo "killed the sweep at $down, restarted (run $run)"
	start_sweep "$run"
done
wait "$loader"
loader=
last=$(python3 -c 'import json,sys; print(max(json.load(open(sys.argv[1])).values()))' "$dir/ledger.json")
echo "last expiry: $last; waiting for two more rounds"
while [ "$(date -u +%s)" -lt $(( $(date -u -d "$last" +%s) + 2 * ${PERIOD%s} + 15 )) ]; do sleep 1; done
pkill -TERM -f "$dir/cellttl sweep" || true
wait "$sweeper" 2>/dev/null || true
sweeper=

echo
echo "events printed: $(wc -l <"$dir/events.jsonl"); sweep runs: 3; kills: 2"
grep -c '"complete":true' "$dir/sweep.log" >/dev/null 2>&1 || true
status=0
"$dir/sweepcheck" judge -ledger "$dir/ledger.json" -events "$dir/events.jsonl" -gaps "$dir/gaps" \
	-bound $(( ${PERIOD%s} + 10 + 5 ))s || status=1
if [ "$DELETE" = 1 ]; then
	before=$(date -u -d "$last" +%Y-%m-%dT%H:%M:%S.%NZ)
	echo "cbt read sessions: $("${cbt[@]}" read sessions 2>/dev/null | grep -c '  sess:' || true) cells stored"
	"$dir/sweepcheck" leftover -table sessions -family sess -before "$before" || status=1
fi
exit $status
