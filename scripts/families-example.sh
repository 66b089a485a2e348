#!/usr/bin/env bash
# families-example.sh replays the worked migration of docs/families.md on a
# standalone emulator: a family of real timestamps without GC, switched to
# DefaultExpiration(7d) with cellttl check, ensure and inspect.
#
#   scripts/families-example.sh
#
# It starts the emulator on port 8087 (FAMILIES_EXAMPLE_PORT) and stops it at
# the end (scripts/example-lib.sh), and prints every command with its
# output, stderr included, as docs/families.md shows them. The table is made
# with cbt: five rows holding eight clicks written from an hour to 20 days
# ago, and one meta cell each.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/example-lib.sh "${FAMILIES_EXAMPLE_PORT:-8087}"
show_all() { show "$@" 2>&1; }
on=(-project my-project -instance my-instance -table events)

# A click AGE ago, as cbt takes it: microseconds, whole milliseconds.
now=$(date -u +%s)
ago() { echo "$(( (now - $1) * 1000000 ))"; }
h=3600 d=86400
"${cbt[@]}" createtable events
"${cbt[@]}" createfamily events clicks
"${cbt[@]}" createfamily events meta
set_row() { "${cbt[@]}" set events "$@" >/dev/null; }
set_row user#1 "clicks:home=1@$(ago $h)" meta:owner=alice
set_row user#2 "clicks:home=1@$(ago $((9 * d)))" "clicks:home=2@$(ago $((2 * d)))" meta:owner=bob
set_row user#3 "clicks:cart=1@$(ago $((20 * d)))" "clicks:home=1@$(ago $((3 * d)))" meta:owner=carol
set_row user#4 "clicks:home=1@$(ago $((12 * d)))" "clicks:home=2@$(ago $((5 * d)))" meta:owner=dave
set_row user#5 "clicks:home=1@$(ago $((6 * h)))" meta:owner=erin

show_all cellttl check "${on[@]}" -family clicks=default:7d
show_all cellttl ensure "${on[@]}" -family clics=default:7d
show_all cellttl ensure "${on[@]}" -family clicks=default:7d
show_all cellttl ensure "${on[@]}" -family clicks=default:7d -format json
show_all cellttl inspect "${on[@]}" -family clicks=default:7d -other meta user#2
week=$(date -u -d "@$((now + 7 * d))" +%Y-%m-%dT%H:%M:%SZ)
show_all cellttl inspect "${on[@]}" -family clicks=default:7d -other meta -now "$week" user#2
show_all cellttl ensure "${on[@]}" -family clicks=default:30d
show_all cellttl ensure "${on[@]}" -family clicks=default:7d -apply -allow-data-loss
show_all cellttl check "${on[@]}" -family clicks=default:7d
show_all cellttl check "${on[@]}" -family clicks=default:7d -format json
