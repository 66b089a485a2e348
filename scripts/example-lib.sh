# example-lib.sh is sourced by the scripts that replay a guide's worked
# example on a standalone emulator (move-example.sh, families-example.sh).
#
#   . scripts/example-lib.sh PORT
#
# It needs cbt and gcloud's cbtemulator on the PATH's SDK (this machine kind
# ships them). It builds cellttl into a temporary directory put first on the
# PATH ($bin, removed at exit), starts the emulator on 127.0.0.1:PORT
# (stopped at exit), waits for it, and defines cbt (the cbt command line for
# my-project/my-instance) and show, which prints a command and its output as
# the guides show them, with "$ echo $?" and the status when it fails.

sdk=$(dirname "$(dirname "$(readlink -f "$(command -v gcloud)")")")
emulator="$sdk/platform/bigtable-emulator/cbtemulator"
[ -x "$emulator" ] || { echo "no cbtemulator under $sdk" >&2; exit 1; }
command -v cbt >/dev/null || { echo "no cbt on the PATH" >&2; exit 1; }

bin=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$bin"' EXIT
# CELLTTL_BIN names a binary built already (CI builds it once); without
# it, cellttl is built here, a module of its own.
if [ -n "${CELLTTL_BIN:-}" ]; then cp "$CELLTTL_BIN" "$bin/cellttl"; else go -C cmd/cellttl build -o "$bin/cellttl" .; fi
"$emulator" -host 127.0.0.1 -port "$1" >/dev/null 2>&1 &
pid=$!
export BIGTABLE_EMULATOR_HOST=127.0.0.1:$1
export PATH="$bin:$PATH" TZ=UTC
cbt=(cbt -project my-project -instance my-instance -creds /dev/null)
for _ in $(seq 50); do "${cbt[@]}" ls >/dev/null 2>&1 && break; sleep 0.1; done

show() { printf '$ %s\n' "$*"; "$@" || printf '$ echo $?\n%s\n' "$?"; echo; }
