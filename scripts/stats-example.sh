#!/usr/bin/env bash
# stats-example.sh replays the audit example of docs/table-wide.md on a
# standalone emulator: cellttl stats over a table whose clicks family lacks
# its policy (its expired clicks are never collected) and whose sess family
# holds expired sessions GC has not collected yet.
#
#   scripts/stats-example.sh
#
# It starts the emulator on port 8088 (STATS_EXAMPLE_PORT) and stops it at
# the end (scripts/example-lib.sh), and prints every command with its
# output, as docs/table-wide.md shows them. The table is made with cbt: 40
# rows, each with one click written up to 10 days ago, one meta cell and
# one session (OneSecond: its timestamp is its expiry) expiring 1 to 11
# hours from now. The emulator's GC collects a one-second family's expired
# cells within 1.5 s (Bigtable's lags up to a week), so stats judges the
# table with -now six hours ahead, when half the sessions have expired
# and are still stored: deterministic, whatever the emulator's GC does.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/example-lib.sh "${STATS_EXAMPLE_PORT:-8088}"
on=(-project my-project -instance my-instance -table events)

now=$(date -u +%s)
at() { echo "$(( (now + $1) * 1000000 ))"; }
h=3600 d=86400
later=$(date -u -d "@$((now + 6 * h))" +%Y-%m-%dT%H:%M:%SZ)
"${cbt[@]}" createtable events
"${cbt[@]}" createfamily events clicks
"${cbt[@]}" createfamily events meta
"${cbt[@]}" createfamily events sess
"${cbt[@]}" setgcpolicy events sess maxage=1s >/dev/null
# Clicks, at -now: 12 written 8 to 10 days before (expired), 4 six and a
# half days before (expiring in 1h to 1d), 24 from 1 to 5 days before.
click_age() { if (($1 < 12)); then echo $((8 * d + $1 * 4 * h)); elif (($1 < 16)); then echo $((6 * d + 12 * h)); else echo $((($1 % 5 + 1) * d)); fi; }
# Sessions, at -now: expiries 5h and 30m before it, 30m and 5h after it,
# ten of each; all after the real now, so that GC keeps them.
sess_at() { case $(($1 % 4)) in 0) echo $((1 * h));; 1) echo $((5 * h + 30 * 60));; 2) echo $((6 * h + 30 * 60));; 3) echo $((11 * h));; esac; }
for i in $(seq 0 39); do
	row=$(printf 'user#%02d' "$i")
	"${cbt[@]}" set events "$row" "clicks:home=$i@$(at $((6 * h - $(click_age "$i"))))" \
		"meta:owner=owner$i" "sess:token=tok$i@$(at "$(sess_at "$i")")" >/dev/null
done

show cellttl stats "${on[@]}" -family clicks=default:7d -family sess=onesecond -now "$later"
show_json() {
	printf '$ %s | jq -c %s\n' "$*" "'$filter'"
	"$@" | jq -c "$filter"
	echo
}
filter='.read, (.families[] | {family, live, expired, uncollectable})'
show_json cellttl stats "${on[@]}" -family clicks=default:7d -family sess=onesecond -now "$later" -format json
