#!/usr/bin/env bash
# sweep-replicas.sh is the evidence for the sweep as a service (issue 32)
# on the standalone emulator (gcloud's cbtemulator, whose GC runs): while
# sessions are written through the library with a schedule, REPLICAS
# (3) processes run `cellttl sweep -schedule … -checkpoint
# bigtable:sweeps/sessions -lease LEASE -metrics-addr …`, with no local
# file. The leader (the replica whose /metrics says
# cellttl_sweep_lease_held 1) is SIGKILLed KILLS (3) times and restarted;
# then the leader is SIGSTOPped past its lease and resumed with SIGCONT.
# It checks:
# - after each kill and the pause, another replica holds the lease within
#   LEASE + PERIOD (+ 1 s of polling);
# - the standbys' /readyz answers 200 and says they stand by, and the
#   leader's /metrics shows rounds, events and the delay histogram;
# - the paused leader, once resumed, prints at most one batch;
# - every session reported, at its final expiry, repeated only by an
#   interrupted (killed or paused) run's batch in flight, with a delay
#   p99 within LEASE + 2 PERIODs + the margin (10 s) (cmd/sweepcheck
#   judge -interrupted -p99).
#
#   scripts/sweep-replicas.sh                                   # ~5 minutes
#   SESSIONS=300 SPAN=60s PERIOD=3s LEASE=6s MAX_LIFE=15s scripts/sweep-replicas.sh   # CI
set -euo pipefail
cd "$(dirname "$0")/.."
SESSIONS=${SESSIONS:-1000}
SPAN=${SPAN:-180s}      # sessions start over this span
PERIOD=${PERIOD:-10s}   # the sweep's period
LEASE=${LEASE:-15s}     # the sweep's lease
MIN_LIFE=${MIN_LIFE:-10s}
MAX_LIFE=${MAX_LIFE:-40s}
REPLICAS=${REPLICAS:-3}
KILLS=${KILLS:-3}
PORT=${PORT:-8094}                # the emulator's; replica i serves metrics on PORT+100+i
MARGIN=10                         # the sweep's default margin, in seconds
BATCH=1000                        # the sweep's default batch

sdk=$(dirname "$(dirname "$(readlink -f "$(command -v gcloud)")")")
emulator="$sdk/platform/bigtable-emulator/cbtemulator"
[ -x "$emulator" ] || { echo "no cbtemulator under $sdk" >&2; exit 1; }
command -v cbt >/dev/null || { echo "no cbt on the PATH" >&2; exit 1; }

dir=$(mktemp -d)
emu= loader=
cleanup() {
	pkill -CONT -f "$dir/cellttl sweep" 2>/dev/null || true
	pkill -KILL -f "$dir/cellttl sweep" 2>/dev/null || true
	for p in $loader $emu; do kill "$p" 2>/dev/null || true; done
	[ "${KEEP:-0}" = 1 ] && echo "kept: $dir" || rm -rf "$dir"
}
trap cleanup EXIT
# CELLTTL_BIN and SWEEPCHECK_BIN name binaries built already (CI builds
# them once for its runs); without them, they are built here.
if [ -n "${CELLTTL_BIN:-}" ]; then cp "$CELLTTL_BIN" "$dir/cellttl"; else go -C cmd/cellttl build -o "$dir/cellttl" .; fi
if [ -n "${SWEEPCHECK_BIN:-}" ]; then cp "$SWEEPCHECK_BIN" "$dir/sweepcheck"; else go build -o "$dir/sweepcheck" ./cmd/sweepcheck; fi
cbt=(cbt -project p -instance i -creds /dev/null)
on=(-project p -instance i -table sessions -family sess=grace:1h:onesecond)
sched=(-schedule sessions-schedule)
now() { date -u +%Y-%m-%dT%H:%M:%S.%NZ; }
secs() { date -u +%s.%N; }
s() { echo "${1%s}"; } # 15s -> 15

"$emulator" -host 127.0.0.1 -port "$PORT" >"$dir/emulator.log" 2>&1 &
emu=$!
export BIGTABLE_EMULATOR_HOST=127.0.0.1:$PORT
for _ in $(seq 50); do "${cbt[@]}" ls >/dev/null 2>&1 && break; sleep 0.1; done
"$dir/cellttl" ensure "${on[@]}" "${sched[@]}" -create -apply >/dev/null
# Modify each family once, so that the emulator's GC loop runs.
"${cbt[@]}" setgcpolicy sessions sess maxage=1h >/dev/null
"${cbt[@]}" setgcpolicy sessions-schedule e maxage=1h >/dev/null
# The checkpoint's table, as docs/sweeps.md tells the operator to make it.
"${cbt[@]}" createtable sweeps families=cp:maxversions=1
"${cbt[@]}" ls

since=$(date -u +%Y-%m-%dT%H:%M:%SZ)
declare -A run  # replica -> its current run number (replica*10 + restarts)
interrupted=() subs=()
# start_replica I starts replica I's next run; its events go to a file of
# the run's own, stamped with the run.
start_replica() {
	local i=$1 n=$(( $1 * 10 ))
	[ -n "${run[$1]:-}" ] && n=$(( run[$1] + 1 ))
	run[$i]=$n
	( "$dir/cellttl" sweep "${on[@]}" "${sched[@]}" -granularity row -every "$PERIOD" \
		-checkpoint bigtable:sweeps/sessions -lease "$LEASE" -metrics-addr "127.0.0.1:$((PORT + 100 + i))" \
		-since "$since" -delete -format json -log-format json -progress=false \
		2>>"$dir/sweep-$i.log" | "$dir/sweepcheck" stamp -run "$n" >"$dir/events-$n.jsonl" ) &
	subs+=($!)
}
# pid_of I is the process ID of replica I's cellttl.
pid_of() { pgrep -f "$dir/cellttl sweep .*-metrics-addr 127.0.0.1:$((PORT + 100 + $1)) " || true; }
# holder prints the replica whose /metrics says it holds the lease.
holder() {
	local i
	for i in $(seq "$REPLICAS"); do
		curl -sf -m 1 "http://127.0.0.1:$((PORT + 100 + i))/metrics" 2>/dev/null |
			grep -qE '^cellttl_sweep_lease_held(\{[^}]*\})? 1$' && { echo "$i"; return; }
	done
	return 0
}
# await_holder NOT waits for a replica other than NOT to hold the lease,
# and prints it; it gives up after LEASE + PERIOD + 15 s.
await_holder() {
	local h deadline=$(( $(date +%s) + $(s "$LEASE") + $(s "$PERIOD") + 15 ))
	while [ "$(date +%s)" -lt "$deadline" ]; do
		h=$(holder)
		[ -n "$h" ] && [ "$h" != "$1" ] && { echo "$h"; return; }
		sleep 0.2
	done
	echo "FAILED: no replica took the lease" >&2
	return 1
}
failovers=()
limit=$(( $(s "$LEASE") + $(s "$PERIOD") + 1 ))
# took START HOLDER records how long after START the HOLDER took over.
took() {
	local f
	f=$(awk -v a="$1" -v b="$(secs)" 'BEGIN { printf "%.1f", b - a }')
	failovers+=("$f")
	echo "replica $2 took the lease after $f s (limit $limit s)"
}

for i in $(seq "$REPLICAS"); do start_replica "$i"; done
"$dir/sweepcheck" load -table sessions -family sess -sessions "$SESSIONS" -span "$SPAN" \
	-min-life "$MIN_LIFE" -max-life "$MAX_LIFE" -ledger "$dir/ledger.json" "${sched[@]}" \
	>"$dir/load.log" 2>&1 &
loader=$!
t0=$(secs)
leader=$(await_holder 0)
took "$t0" "$leader"
span_s=$(s "$SPAN")
sleep $(( 2 * $(s "$PERIOD") + 1 ))

# What an operator's probes and scrapes see while it runs.
echo
for i in $(seq "$REPLICAS"); do
	code=$(curl -s -o "$dir/readyz-$i" -w '%{http_code}' "http://127.0.0.1:$((PORT + 100 + i))/readyz" || true)
	echo "replica $i /readyz: $code $(head -c 200 "$dir/readyz-$i")"
	[ "$code" = 200 ] || { echo "FAILED: replica $i is not ready"; exit 1; }
done
echo

for k in $(seq "$KILLS"); do
	sleep $(( span_s / (KILLS + 3) ))
	leader=$(holder)
	[ -n "$leader" ] || leader=$(await_holder 0)
	pid=$(pid_of "$leader")
	kill -KILL "$pid"
	t=$(secs)
	interrupted+=("${run[$leader]}")
	echo "kill $k: SIGKILLed the leader, replica $leader (run ${run[$leader]}), at $(now)"
	took "$t" "$(await_holder "$leader")"
	sleep 2
	start_replica "$leader"
done

sleep $(( span_s / (KILLS + 3) ))
leader=$(holder)
[ -n "$leader" ] || leader=$(await_holder 0)
# What a scrape of the leader shows, once it has delivered events.
echo
curl -sf "http://127.0.0.1:$((PORT + 100 + leader))/metrics" >"$dir/metrics"
for m in cellttl_sweep_rounds_total cellttl_sweep_events_total cellttl_sweep_delivery_delay_seconds_bucket cellttl_sweep_lease_held; do
	grep -m 2 "^$m" "$dir/metrics" | sed -E 's/,?otel_scope_[a-z_]*="[^"]*"//g' | cut -c1-160 || { echo "FAILED: the leader's /metrics lacks $m"; exit 1; }
done
echo
pid=$(pid_of "$leader")
paused_run=${run[$leader]}
kill -STOP "$pid"
t=$(secs)
interrupted+=("$paused_run")
echo "SIGSTOPped the leader, replica $leader (run $paused_run), at $(now)"
took "$t" "$(await_holder "$leader")"
sleep $(( $(s "$LEASE") + $(s "$PERIOD") ))
resumed=$(now)
kill -CONT "$pid"
echo "SIGCONT to replica $leader at $resumed"

wait "$loader" || { cat "$dir/load.log"; exit 1; }
loader=
cat "$dir/load.log"
last=$(python3 -c 'import json,sys; print(max(json.load(open(sys.argv[1])).values()))' "$dir/ledger.json")
echo "last expiry: $last; waiting for two more rounds"
end=$(date -u -d "$last" +%s)
while [ "$(date -u +%s)" -lt $((end + 2 * $(s "$PERIOD") + $(s "$LEASE") + MARGIN + 5)) ]; do sleep 1; done
for i in $(seq "$REPLICAS"); do
	[ -n "$(pid_of "$i")" ] || { echo "FAILED: replica $i stopped"; cat "$dir/sweep-$i.log"; exit 1; }
done
pkill -TERM -f "$dir/cellttl sweep" || true
for p in "${subs[@]}"; do wait "$p" 2>/dev/null || true; done

status=0
after=$(jq -r --arg t "$resumed" 'select(.at > $t) | .event' "$dir/events-$paused_run.jsonl" | wc -l)
echo
echo "the paused leader printed $after events after SIGCONT (at most one batch, $BATCH)"
[ "$after" -le "$BATCH" ] || status=1
max=$(printf '%s\n' "${failovers[@]}" | sort -g | tail -1)
echo "failovers: ${#failovers[@]} (the first at start-up), the longest $max s (limit LEASE + PERIOD + 1 s of polling = $limit s)"
awk -v m="$max" -v l="$limit" 'BEGIN { exit !(m <= l) }' || { echo "FAILED: a failover took longer than the lease and a period"; status=1; }
cat "$dir"/events-*.jsonl >"$dir/events.jsonl"
echo "events printed: $(wc -l <"$dir/events.jsonl") by $(ls "$dir"/events-*.jsonl | wc -l) runs of $REPLICAS replicas; interrupted runs: ${interrupted[*]}"
"$dir/sweepcheck" judge -ledger "$dir/ledger.json" -events "$dir/events.jsonl" \
	-interrupted "$(IFS=,; echo "${interrupted[*]}")" -p99 \
	-bound $(( $(s "$LEASE") + 2 * $(s "$PERIOD") + MARGIN ))s || status=1
exit $status
