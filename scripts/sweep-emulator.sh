#!/usr/bin/env bash
# sweep-emulator.sh is the evidence for sweeps on the standalone emulator
# (gcloud's cbtemulator, a separate process whose GC runs): while sessions
# are written with lifetimes of 10-40 s and 40% of them renewed (by Touch,
# up to three times), `cellttl sweep -every 10s -granularity row` runs over
# the family sess=grace:1h:onesecond, and is killed (SIGKILL) and restarted
# twice. Then it judges the events against the sessions written
# (cmd/sweepcheck): every session reported, at its final expiry, none
# early, none twice but by the run after a kill (the batch in flight), and
# each within one period + margin + 5 s of its expiry. With DELETE=1 the
# sweep deletes what it reported, and afterwards neither cbt read nor a
# raw read finds a cell that expired before the last round.
#
# The families are created with the table (ensure -create) and then given
# their policy again with cbt: the emulator starts its GC loop only once a
# family is modified, so GC runs during the whole test.
#
# SCHEDULE=1 runs the same with a schedule (issue 26): ensure -schedule
# sets up the schedule table, the writers fill it (ttl.WithSchedule), and
# the sweep reads it (sweep -schedule). Afterwards sweepcheck entries finds
# every stored cell's entry, and cells written with cbt (no entry) are
# reported by a reconcile round (sweep -schedule -reconcile), and only
# they, counted as unscheduled.
#
# OUTAGE=SECONDS puts a proxy (sweepcheck proxy) between the emulator and
# the writers and sweepers, and cuts it for that long, a third into the
# span: the emulator keeps its data and its clock while no client reaches
# it. Two sweepers run, one through the schedule (with SCHEDULE=1) and one
# scanning, neither killed (KILLS=0 unless given), each with a round
# timeout (-round-timeout, ROUND_TIMEOUT): each must report each session
# once, every round the outage stops saying so and the sweepers running
# on. The writers bound each call by 5 s (sweepcheck load -write-timeout),
# less than the sweep's margin, as a service must: a write that lands
# after the watermark passed its expiry is never reported. Their failed
# writes are counted, and what must be reported is what the table holds
# at the end; with SCHEDULE=1 no stored cell may lack its entry. The
# clients reconnect with gRPC's exponential backoff, up to about 17 s
# after a 30 s outage: the outage's gap, in which the delay bound does not
# apply, runs from the first expiry due during the outage (a margin and a
# period before the cut) to RECONNECT (20 s) after the restore.
#
#   scripts/sweep-emulator.sh                 # ~4 minutes
#   DELETE=1 SESSIONS=2000 scripts/sweep-emulator.sh
#   SCHEDULE=1 DELETE=1 scripts/sweep-emulator.sh
#   SCHEDULE=1 OUTAGE=30 scripts/sweep-emulator.sh
#   SESSIONS=200 SPAN=30s PERIOD=3s MAX_LIFE=15s scripts/sweep-emulator.sh   # CI: ~2 minutes
set -euo pipefail
cd "$(dirname "$0")/.."
SESSIONS=${SESSIONS:-1000}
SPAN=${SPAN:-120s}      # sessions start over this span
PERIOD=${PERIOD:-10s}   # the sweep's period
MIN_LIFE=${MIN_LIFE:-10s}
MAX_LIFE=${MAX_LIFE:-40s}
DELETE=${DELETE:-0}
SCHEDULE=${SCHEDULE:-0}
OUTAGE=${OUTAGE:-0}
KILLS=${KILLS:-$([ "$OUTAGE" = 0 ] && echo 2 || echo 0)}
ROUND_TIMEOUT=${ROUND_TIMEOUT:-$([ "$OUTAGE" = 0 ] && echo 0s || echo 5s)}
RECONNECT=${RECONNECT:-20}
CBT_ROWS=${CBT_ROWS:-20} # written with cbt, for the reconcile round
PORT=${PORT:-8089}

sdk=$(dirname "$(dirname "$(readlink -f "$(command -v gcloud)")")")
emulator="$sdk/platform/bigtable-emulator/cbtemulator"
[ -x "$emulator" ] || { echo "no cbtemulator under $sdk" >&2; exit 1; }
command -v cbt >/dev/null || { echo "no cbt on the PATH" >&2; exit 1; }

dir=$(mktemp -d)
emu= loader= proxy=
sweepers=()
cleanup() {
	# The cellttl processes inside the sweepers' subshells, which killing
	# a subshell leaves running; then the rest.
	pkill -KILL -f "$dir/cellttl sweep" 2>/dev/null || true
	for p in "${sweepers[@]}" $loader $proxy $emu; do kill "$p" 2>/dev/null || true; done
	[ "${KEEP:-0}" = 1 ] && echo "kept: $dir" || rm -rf "$dir"
}
trap cleanup EXIT
# CELLTTL_BIN and SWEEPCHECK_BIN name binaries built already (CI builds
# them once for its runs); without them, they are built here.
if [ -n "${CELLTTL_BIN:-}" ]; then cp "$CELLTTL_BIN" "$dir/cellttl"; else go -C cmd/cellttl build -o "$dir/cellttl" .; fi
if [ -n "${SWEEPCHECK_BIN:-}" ]; then cp "$SWEEPCHECK_BIN" "$dir/sweepcheck"; else go build -o "$dir/sweepcheck" ./cmd/sweepcheck; fi
cbt=(cbt -project p -instance i -creds /dev/null)
fam=sess=grace:1h:onesecond
on=(-project p -instance i -table sessions -family "$fam")
now() { date -u +%Y-%m-%dT%H:%M:%S.%NZ; }

"$emulator" -host 127.0.0.1 -port "$PORT" >"$dir/emulator.log" 2>&1 &
emu=$!
export BIGTABLE_EMULATOR_HOST=127.0.0.1:$PORT
for _ in $(seq 50); do "${cbt[@]}" ls >/dev/null 2>&1 && break; sleep 0.1; done
sched=()
if [ "$SCHEDULE" = 1 ]; then
	sched=(-schedule sessions-schedule)
fi
"$dir/cellttl" ensure "${on[@]}" "${sched[@]}" -create -apply >/dev/null
# Modify each family once, so that the emulator's GC loop runs.
"${cbt[@]}" setgcpolicy sessions sess maxage=1h >/dev/null
if [ "$SCHEDULE" = 1 ]; then
	"${cbt[@]}" setgcpolicy sessions-schedule e maxage=1h >/dev/null
	"$dir/cellttl" check "${on[@]}" "${sched[@]}"
fi
"${cbt[@]}" ls sessions

# Through a proxy, the clients lose the emulator when it is cut; cbt and
# the checks at the end reach the emulator itself.
if [ "$OUTAGE" != 0 ]; then
	"$dir/sweepcheck" proxy -to "127.0.0.1:$PORT" >"$dir/proxy.log" 2>&1 &
	proxy=$!
	for _ in $(seq 50); do grep -q '^proxy ' "$dir/proxy.log" && break; sleep 0.1; done
	clients=$(sed -n 's/^proxy \([^ ]*\) .*/\1/p' "$dir/proxy.log")
else
	clients=$BIGTABLE_EMULATOR_HOST
fi

del=()
[ "$DELETE" = 1 ] && del=(-delete)
since=$(date -u +%Y-%m-%dT%H:%M:%SZ)
# The sweepers: A through the schedule (or scanning without one); B
# scanning, beside it during an outage. Each has its checkpoint, its log
# and its events, stamped with the run that printed them.
kinds=(a)
[ "$OUTAGE" != 0 ] && [ "$SCHEDULE" = 1 ] && kinds=(a b)
# start_sweep KIND RUN starts sweeper KIND, run RUN.
start_sweep() {
	local how=("${sched[@]}")
	[ "$1" = b ] && how=()
	( BIGTABLE_EMULATOR_HOST=$clients "$dir/cellttl" sweep "${on[@]}" "${how[@]}" \
		-granularity row -every "$PERIOD" -round-timeout "$ROUND_TIMEOUT" -checkpoint "$dir/sweep-$1.json" \
		-since "$since" "${del[@]}" -format json -progress=false \
		2>>"$dir/sweep-$1.log" | "$dir/sweepcheck" stamp -run "$2" >>"$dir/events-$1.jsonl" ) &
	sweepers+=($!)
}
for k in "${kinds[@]}"; do start_sweep "$k" 0; done
tolerate=()
[ "$OUTAGE" != 0 ] && tolerate=(-tolerate)
BIGTABLE_EMULATOR_HOST=$clients "$dir/sweepcheck" load -table sessions -family sess -sessions "$SESSIONS" -span "$SPAN" \
	-min-life "$MIN_LIFE" -max-life "$MAX_LIFE" -ledger "$dir/ledger.json" "${sched[@]}" "${tolerate[@]}" \
	>"$dir/load.log" 2>&1 &
loader=$!
span_s=${SPAN%s}
: >"$dir/gaps"
for run in $(seq "$KILLS"); do
	sleep $((span_s / 3 + RANDOM % 7))
	# SIGKILL the cellttl process itself (not the subshell): no clean end.
	pkill -KILL -f "$dir/cellttl sweep" || true
	down=$(now)
	for p in "${sweepers[@]}"; do wait "$p" 2>/dev/null || true; done
	sweepers=()
	sleep 3
	echo "$down $(now)" >>"$dir/gaps"
	echo "killed the sweep at $down, restarted (run $run)"
	for k in "${kinds[@]}"; do start_sweep "$k" "$run"; done
done
if [ "$OUTAGE" != 0 ]; then
	sleep $((span_s / 3))
	kill -USR1 "$proxy"
	cut=$(now)
	# An expiry is due a margin (10 s) and up to a period after it: those
	# due during the outage are in its gap.
	due=$(date -u -d "@$(($(date -u +%s) - 10 - ${PERIOD%s}))" +%Y-%m-%dT%H:%M:%SZ)
	echo "cut the clients off the emulator at $cut for ${OUTAGE}s"
	sleep "$OUTAGE"
	kill -USR2 "$proxy"
	restored=$(date -u +%s)
	echo "$due $(date -u -d "@$((restored + RECONNECT))" +%Y-%m-%dT%H:%M:%SZ)" >>"$dir/gaps"
	echo "restored at $(now)"
fi
wait "$loader" || { cat "$dir/load.log"; exit 1; }
loader=
cat "$dir/load.log"
if [ "$SCHEDULE" = 1 ]; then
	# While the sessions are stored: none without its entry.
	"$dir/sweepcheck" entries -table sessions -family sess -schedule sessions-schedule || exit 1
fi
last=$(python3 -c 'import json,sys; print(max(json.load(open(sys.argv[1])).values()))' "$dir/ledger.json")
echo "last expiry: $last; waiting for two more rounds"
end=$(date -u -d "$last" +%s)
[ "$OUTAGE" != 0 ] && [ "$end" -lt $((restored + RECONNECT)) ] && end=$((restored + RECONNECT))
while [ "$(date -u +%s)" -lt $((end + 2 * ${PERIOD%s} + 15)) ]; do sleep 1; done
for p in "${sweepers[@]}"; do kill -0 "$p" 2>/dev/null || { echo "FAILED: a sweeper stopped"; exit 1; }; done
pkill -TERM -f "$dir/cellttl sweep" || true
for p in "${sweepers[@]}"; do wait "$p" 2>/dev/null || true; done
sweepers=()

status=0
for k in "${kinds[@]}"; do
	how="scanning"
	[ "$k" = a ] && [ "$SCHEDULE" = 1 ] && how="through the schedule"
	echo
	echo "sweeper $k ($how): events printed: $(wc -l <"$dir/events-$k.jsonl"); runs: $((KILLS + 1)); kills: $KILLS"
	if [ "$OUTAGE" != 0 ]; then
		echo "rounds that failed, each saying so on stderr: $(grep -c 'the round did not finish within' "$dir/sweep-$k.log" || true)"
		grep -m 1 'the round did not finish within' "$dir/sweep-$k.log" | cut -c1-240 || true
	fi
	"$dir/sweepcheck" judge -ledger "$dir/ledger.json" -events "$dir/events-$k.jsonl" -gaps "$dir/gaps" \
		-bound $(( ${PERIOD%s} + 10 + 5 ))s || status=1
done
if [ "$DELETE" = 1 ]; then
	before=$(date -u -d "$last" +%Y-%m-%dT%H:%M:%S.%NZ)
	echo "cbt read sessions: $("${cbt[@]}" read sessions 2>/dev/null | grep -c '  sess:' || true) cells stored"
	"$dir/sweepcheck" leftover -table sessions -family sess -before "$before" || status=1
fi
if [ "$SCHEDULE" = 1 ]; then
	"$dir/sweepcheck" entries -table sessions -family sess -schedule sessions-schedule || status=1
	if [ "$DELETE" = 1 ]; then
		# The entries a deleting sweep left behind: those of the seconds
		# that ended by its last round's Until, which it served whole.
		until=$(jq -r '.state.until' "$dir/sweep-a.json")
		"${cbt[@]}" read sessions-schedule 2>/dev/null | python3 -c '
import sys, datetime
until = sys.argv[1].replace("Z", "+00:00")
if "." in until:
	head, frac = until.split(".", 1)
	until = head + "." + frac[:frac.index("+")][:6].ljust(6, "0") + frac[frac.index("+"):]
u = datetime.datetime.fromisoformat(until).timestamp()
keys = [l.strip() for l in sys.stdin if l[:1] not in ("", " ", "-")]
slots = [int(k.split("#")[1]) for k in keys if k.count("#") >= 2]
left = sum(1 for s in slots if s + 1 <= u)
print(f"entries left of the seconds served whole by the last round (until {sys.argv[1]}): {left} of {len(slots)}")
' "$until"
	fi

	# Writers the library never saw: cbt writes cells that expire in 2 to
	# 4 s, with no entry; a reconcile round reports them, and only them.
	echo
	from=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)
	for i in $(seq "$CBT_ROWS"); do
		at=$(( ($(date -u +%s) + 2 + i % 3) * 1000000 ))
		"${cbt[@]}" set sessions "cbt#$i" "sess:token=cbt$i@$at" >/dev/null
	done
	echo "wrote $CBT_ROWS rows with cbt, no entry; waiting for them to expire, then a reconcile round"
	sleep $((4 + 10 + 2))
	"$dir/cellttl" sweep "${on[@]}" "${sched[@]}" -reconcile -granularity row -since "$from" \
		-checkpoint "$dir/reconcile.json" -format json -progress=false >"$dir/reconcile.jsonl" 2>"$dir/reconcile.log" || true
	found=$(jq -r 'select(.kind != null) | .row' "$dir/reconcile.jsonl" | sort -u)
	unscheduled=$(jq -r 'select(.report != null) | .report.unscheduled // 0' "$dir/reconcile.jsonl")
	cbt_found=$(grep -c '^cbt#' <<<"$found" || true)
	others=$(grep -vc '^cbt#' <<<"$found" || true)
	echo "reconcile round: $cbt_found of $CBT_ROWS cbt rows reported, $others other rows; unscheduled: $unscheduled"
	if [ "$cbt_found" != "$CBT_ROWS" ] || [ "$others" != 0 ] || [ "$unscheduled" != "$CBT_ROWS" ]; then
		cat "$dir/reconcile.log"; echo "FAIL: the reconcile round"; status=1
	else
		echo "PASS"
	fi
fi
exit $status
