#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test-under-load.sh - the README's test command, RUNS times, beside a
# loop of parallel rebuilds (issue 30: "10 of 10 beside a parallel build").
#
#   tools/test-under-load.sh [rev] [runs]
#
# Clones this repository at rev (default HEAD) into a scratch directory,
# builds it as the README does, then runs the README's test command runs
# times (default 10) while a second build directory of the same clone is
# cleaned and rebuilt with ninja -j2 in a loop, so the tests share the
# machine with a parallel build throughout. Each run's log is kept; a
# summary line per run (exit status, seconds, load average, meson's
# Ok/Fail/Timeout counts) and a total go to stdout and OUT/summary.
# OUT is $TMPDIR/test-under-load.<time> unless OUT is set.
# Exit status: 0 if every run passed, 1 otherwise.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rev=${1:-HEAD}
runs=${2:-10}
out=${OUT:-${TMPDIR:-/tmp}/test-under-load.$(date +%Y%m%d-%H%M%S)}
clone=$out/clone
mkdir -p "$out"

if ! git clone -q "$here" "$clone" ||
	! git -C "$clone" checkout -q "$rev"; then
	echo "test-under-load: cannot clone $here at $rev" >&2
	exit 1
fi
(cd "$clone" && meson setup build >/dev/null && ninja -C build >/dev/null) || {
	echo "test-under-load: the README's build failed" >&2
	exit 1
}
meson setup "$out/pbuild" "$clone" -Dtests=enabled >/dev/null || exit 1

# The parallel build: clean and rebuild until the runs are over.
(
	while [ ! -e "$out/done" ]; do
		ninja -C "$out/pbuild" -t clean >/dev/null
		ninja -C "$out/pbuild" -j2 >/dev/null 2>&1
	done
) &
builder=$!
trap 'touch "$out/done"; kill $builder 2>/dev/null' EXIT

pass=0
fail=0
for i in $(seq 1 "$runs"); do
	start=$(date +%s)
	(cd "$clone" && meson configure build -Dtests=enabled &&
		meson test -C build --print-errorlogs) >"$out/run$i.log" 2>&1
	rc=$?
	end=$(date +%s)
	if [ $rc -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
	counts=$(grep -E '^(Ok|Fail|Timeout):' "$out/run$i.log" | tr -s ' \n' ' ')
	echo "run $i rc=$rc $((end - start))s load=$(cut -d' ' -f1 /proc/loadavg) $counts" |
		tee -a "$out/summary"
done
echo "$pass passed, $fail failed ($out)" | tee -a "$out/summary"
[ "$fail" -eq 0 ]
