#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dist-bench.sh - the distribution beside Erlang (docs/benchmarks.md,
# "Distribution"): call round trips and one-way bursts, erl -> erl,
# erl -> libsmarm and libsmarm -> erl, in one run.
#
#   tools/dist-bench.sh [build-dir] [smarm-dist-bench options...]
#
# build-dir (default build-rel; relative paths are tried from the current
# directory, then from the source root) holds tools/smarm-dist-bench.
# Options go to it: --calls N (20000), --msgs N (100000), --rounds R
# (3), --workers W (2), --only ee,el,le,ee-burst,el-burst,le-burst (all).
# epmd is started (epmd -daemon) if none runs; the
# two erl peers are started and stopped by smarm-dist-bench itself. The
# load average is printed before and after, since the machine's noise
# is in every figure.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench-lib.sh
. "$here/bench-lib.sh"
bench_find dist-bench.sh "${1:-build-rel}"
[[ $# -gt 0 ]] && shift
dbench=$(dirname "$bench")/smarm-dist-bench
if [[ ! -x $dbench ]]; then
    echo "dist-bench.sh: no $dbench (built only with the dist layer)" >&2
    exit 1
fi
for p in erl epmd; do
    command -v "$p" >/dev/null || { echo "dist-bench.sh: no $p" >&2; exit 77; }
done
epmd -daemon
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
"$dbench" "$@"
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
