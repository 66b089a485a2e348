#!/usr/bin/env bash
# check-example.sh runs a script that replays a guide's worked example and
# checks that it ran the commands the guide shows, in the guide's order,
# each ending with the exit status the guide shows ("$ echo $?"), so that a
# guide cannot drift from the command it documents. CI runs it for every
# such pair.
#
#   scripts/check-example.sh scripts/families-example.sh docs/families.md
#
# The guide's part is the section (up to the next "## " heading) of the
# line that names the script. Instants (RFC 3339) in command lines differ
# from run to run and are compared as "TIME"; the output between the
# commands is the guide's to show and is not compared (it holds the run's
# instants and sizes).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 2 ] || { echo "usage: scripts/check-example.sh SCRIPT GUIDE" >&2; exit 2; }
script=$1 guide=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# steps prints the "$ " lines of its input (with FENCED=1, of the fenced
# blocks of the section that names $script only), instants replaced, and
# "exit N" for each "$ echo $?".
steps() {
	awk -v fenced="${FENCED:-0}" -v script="$script" '
		fenced && index($0, script) { on = 1 }
		fenced && on && /^## / && !index($0, script) && seen { on = 0 }
		fenced && on { seen = 1 }
		fenced && !on { next }
		/^```/ { inb = !inb; next }
		fenced && !inb { next }
		/^\$ echo \$\?$/ { getline s; print "exit " s; next }
		/^\$ / { gsub(/[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9:.]+Z/, "TIME"); print }
	' "$1"
}

bash "$script" >"$out" 2>&1 || { cat "$out"; echo "FAILED: $script exited $?"; exit 1; }
if ! diff <(FENCED=1 steps "$guide") <(steps "$out") >"$out.diff"; then
	echo "FAILED: $guide shows other commands or exit statuses than $script runs (< guide, > script):"
	cat "$out.diff"; rm -f "$out.diff"
	exit 1
fi
rm -f "$out.diff"
echo "ok: $guide: $(FENCED=1 steps "$guide" | grep -c '^\$ ') commands, as $script runs them"
