#!/usr/bin/env bash
# move-example.sh replays the worked move of docs/moves.md on a standalone emulator:
# a family of real-timestamp sessions moved to OneSecond, online.
#
#   scripts/move-example.sh
#
# It needs cbt and gcloud's cbtemulator on the PATH's SDK (this machine kind
# ships them); it starts the emulator on port 8086 and stops it at the end,
# and prints every command with its output, as docs/moves.md shows them.
set -euo pipefail
cd "$(dirname "$0")/.."

sdk=$(dirname "$(dirname "$(readlink -f "$(command -v gcloud)")")")
emulator="$sdk/platform/bigtable-emulator/cbtemulator"
[ -x "$emulator" ] || { echo "no cbtemulator under $sdk" >&2; exit 1; }
command -v cbt >/dev/null || { echo "no cbt on the PATH" >&2; exit 1; }

bin=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$bin"' EXIT
go build -o "$bin/cellttl" ./cmd/cellttl
"$emulator" -host 127.0.0.1 -port 8086 >/dev/null 2>&1 &
pid=$!
export BIGTABLE_EMULATOR_HOST=127.0.0.1:8086
export PATH="$bin:$PATH" TZ=UTC
for _ in $(seq 50); do cbt -project my-project -instance my-instance -creds /dev/null ls >/dev/null 2>&1 && break; sleep 0.1; done

show() { printf '$ %s\n' "$*"; "$@" || printf '$ echo $?\n%s\n' "$?"; echo; }
cbt=(cbt -project my-project -instance my-instance -creds /dev/null)
on=(-project my-project -instance my-instance -table sessions)

"${cbt[@]}" createtable sessions
"${cbt[@]}" createfamily sessions sess
for i in 1 2 3 4 5; do "${cbt[@]}" set sessions "user#$i" "sess:token=tok$i" >/dev/null; done

show cellttl ensure "${on[@]}" -family sess=onesecond 2>&1
start=$(date -u -d '+30 sec' +%Y-%m-%dT%H:%M:%SZ)
move=(-family sess=onesecond -from none -start "$start" -old for:30m -skew 1s)
show cellttl move plan "${on[@]}" "${move[@]}"
show cellttl move start "${on[@]}" "${move[@]}" -apply
while [ "$(date -u +%s)" -le "$(date -u -d "$start" +%s)" ]; do sleep 1; done
show cellttl move status "${on[@]}" "${move[@]}"
show cellttl move finish "${on[@]}" "${move[@]}" -apply 2>&1
show cellttl move rewrite "${on[@]}" "${move[@]}" -apply -checkpoint "$bin/rewrite.json"
show cellttl move finish "${on[@]}" "${move[@]}" -apply
show cellttl check "${on[@]}" -family sess=onesecond
show "${cbt[@]}" read sessions
