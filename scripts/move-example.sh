#!/usr/bin/env bash
# move-example.sh replays the worked move of docs/moves.md on a standalone emulator:
# a family of real-timestamp sessions moved to OneSecond, online.
#
#   scripts/move-example.sh
#
# It starts the emulator on port 8086 and stops it at the end
# (scripts/example-lib.sh), and prints every command with its output, as
# docs/moves.md shows them.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/example-lib.sh 8086
on=(-project my-project -instance my-instance -table sessions)

"${cbt[@]}" createtable sessions
"${cbt[@]}" createfamily sessions sess
for i in 1 2 3 4 5; do "${cbt[@]}" set sessions "user#$i" "sess:token=tok$i" >/dev/null; done

show cellttl ensure "${on[@]}" -family sess=onesecond 2>&1
start=$(date -u -d '+30 sec' +%Y-%m-%dT%H:%M:%SZ)
move=(-family sess=onesecond -from none -start "$start" -old for:30m -skew 1s)
show cellttl move plan "${on[@]}" "${move[@]}"
show cellttl move start "${on[@]}" "${move[@]}" -apply
show cellttl move rewrite "${on[@]}" "${move[@]}" 2>&1
while [ "$(date -u +%s)" -le "$(date -u -d "$start" +%s)" ]; do sleep 1; done
show cellttl move status "${on[@]}" "${move[@]}"
show cellttl move rewrite "${on[@]}" "${move[@]}"
show cellttl move finish "${on[@]}" "${move[@]}" -apply 2>&1
(cd "$bin" && show cellttl move rewrite "${on[@]}" "${move[@]}" -apply -checkpoint rewrite.json)
show cellttl move finish "${on[@]}" "${move[@]}" -apply
show cellttl check "${on[@]}" -family sess=onesecond
show "${cbt[@]}" read sessions
