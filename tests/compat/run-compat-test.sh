#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# run-compat-test.sh BUILD_DIR - prove that a program built against
# libsmarm 0.2 loads and runs against this library (same SONAME,
# libsmarm.so.0), as NEWS.md promises for every ABI minor.
#
# A real 0.2 build is reproduced without the 0.2 sources: consumer_v02.c
# is compiled against the 0.2 headers as released (v0.2/smarm) and linked
# against a stub libsmarm.so.0 built from 0.2's version script
# (v0.2/libsmarm.map), so its undefined references carry exactly the
# version nodes a 0.2 link records. The stub is then left behind and the
# program runs against BUILD_DIR's libsmarm.so.0.
#
# TAP: the script's checks first, then the consumer's own.
# Environment: CC (default cc), READELF (default readelf).
set -u
if [ $# -ne 1 ] || [ ! -e "$1/libsmarm.so.0" ]; then
	echo "usage: $0 BUILD_DIR (with libsmarm.so.0 in it)" >&2
	exit 2
fi
BUILD=$(cd "$1" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
CC=${CC:-cc}
READELF=${READELF:-readelf}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/smarm-compat.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

bail() {
	echo "1..0 # SKIP"
	echo "Bail out! $*"
	exit 1
}

# The stub: every symbol of 0.2's map, under 0.2's nodes.
mkdir -p "$TMP/stub"
sed -n 's/^[[:space:]]*\(smarm_[a-z0-9_]*\);.*/void \1(void) {}/p' \
	"$HERE/v0.2/libsmarm.map" >"$TMP/stub/stub.c"
[ -s "$TMP/stub/stub.c" ] || bail "no symbols in v0.2/libsmarm.map"
"$CC" -shared -fPIC -o "$TMP/stub/libsmarm.so" "$TMP/stub/stub.c" \
	-Wl,--version-script="$HERE/v0.2/libsmarm.map" \
	-Wl,-soname,libsmarm.so.0 2>"$TMP/err" || bail "stub: $(cat "$TMP/err")"
"$CC" -std=gnu11 -Wall -Wextra -Werror -I"$HERE/v0.2" \
	-o "$TMP/consumer_v02" "$HERE/consumer_v02.c" \
	-L"$TMP/stub" -lsmarm -Wl,--no-as-needed 2>"$TMP/err" ||
	bail "consumer: $(cat "$TMP/err")"
rm -rf "$TMP/stub"

# Our checks come first; the consumer's plan is offset after them.
needs=$("$READELF" -W -V "$TMP/consumer_v02" 2>/dev/null)
refs=$("$READELF" -W --dyn-syms "$TMP/consumer_v02" 2>/dev/null)
out=$(LD_LIBRARY_PATH="$BUILD" "$TMP/consumer_v02")
rc=$?
plan=$(printf '%s\n' "$out" | sed -n 's/^1\.\.\([0-9]*\)$/\1/p')
[ -n "$plan" ] || bail "consumer printed no plan (exit $rc)"
echo "1..$((plan + 3))"
n=0
report() { # cond text
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi
}
printf '%s\n' "$refs" | grep -q 'smarm_chan_len@SMARM_0\.1'
report $? "the consumer references smarm_chan_len@SMARM_0.1 (a 0.2 build)"
printf '%s\n' "$needs" | grep -q 'SMARM_0\.3'
report $((!$?)) "the consumer needs no SMARM_0.3 node"
report $rc "the consumer exits 0 against this libsmarm.so.0"
printf '%s\n' "$out" | sed -n 's/^\(not \)\{0,1\}ok \([0-9]*\)/&/p' |
	while IFS= read -r line; do
		num=$(printf '%s' "$line" | sed 's/^\(not \)\{0,1\}ok \([0-9]*\).*/\2/')
		rest=$(printf '%s' "$line" | sed 's/^\(not \)\{0,1\}ok [0-9]*//')
		case $line in
		"not ok"*) echo "not ok $((num + 3))$rest" ;;
		*) echo "ok $((num + 3))$rest" ;;
		esac
	done
exit $rc
