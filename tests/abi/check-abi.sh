#!/usr/bin/env bash
# check-abi.sh SRC_DIR LIB - compare the built libsmarm.so with the ABI
# baseline abi/libsmarm.abi using libabigail's abidiff (public types only).
# Any difference fails: an ABI change must be deliberate. After a
# deliberate change (a new symbol in a new version node), regenerate the
# baseline with:
#   abidw --headers-dir abi/smarm --drop-undefined-syms --no-corpus-path \
#         build/libsmarm.so > abi/libsmarm.abi
# Prints TAP. Skips (exit 77) when abidiff is not installed.
set -u
src=$1
lib=$2
echo "1..1"
if ! command -v abidiff >/dev/null 2>&1; then
	echo "ok 1 - abidiff against abi/libsmarm.abi # SKIP abigail-tools not installed"
	exit 0
fi
out=$(abidiff --hd2 "$src/abi/smarm" --drop-private-types \
	"$src/abi/libsmarm.abi" "$lib" 2>&1)
rc=$?
if [ "$rc" -eq 0 ]; then
	echo "ok 1 - abidiff against abi/libsmarm.abi: no ABI change"
else
	echo "not ok 1 - abidiff against abi/libsmarm.abi (exit $rc)"
	printf '%s\n' "$out" | sed 's/^/# /'
	exit 1
fi
