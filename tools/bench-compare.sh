#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench-compare.sh - libsmarm against its Go and Erlang peers, same session.
#
#   tools/bench-compare.sh [build-dir] [workload...]
#
# build-dir (default build-rel; relative paths are tried from the current
# directory, then from the source root) holds tools/smarm-bench.  With no
# workload, the six workloads smarm-bench and the peers share are run:
# spawn_join chained_spawn ping_pong_rtt ring_hop yield idle_bytes
# (idle_bytes is bytes per parked actor, not ns; idle_bytes_release, the
# same with every actor's parked stack given back, is set beside the
# peers' idle_bytes). fairness (a max/min
# ratio, not ns) and wake_latency (p99 ns) are shared too but must be
# named; their p50 and counts are on the `# PROG-note` lines of the log.
#
# Everything runs on WORKERS (default 1) workers / GOMAXPROCS / erl +S
# WORKERS:WORKERS.  For each
# workload the three programs are run back to back (smarm, go, erlang), and
# that is repeated ROUNDS times, so slow phases of a noisy machine hit all
# three alike.  Each invocation does a warm-up and RUNS timed runs; the
# table reports, per program, the median of all timed runs of all rounds
# (taken from the per-run lines on stderr; the CSV medians are the fallback)
# and the ratios smarm/go and smarm/erlang (below 1: smarm is faster).
#
# Environment: RUNS (5), ROUNDS (2), PEERS ("go erlang"), WORKERS (1),
# SMARM_ARGS (extra smarm-bench options, e.g. "--spin-ns 0").  The raw output of
# every invocation is kept in a temporary log that is printed at the end
# when KEEP_LOG=1, else deleted.  Exit status 1 if any program failed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench-lib.sh
. "$here/bench-lib.sh"
bench_find bench-compare.sh "${1:-build-rel}"
[[ $# -gt 0 ]] && shift

runs=${RUNS:-5}
rounds=${ROUNDS:-2}
peers=${PEERS:-go erlang}
workers=${WORKERS:-1}
read -r -a smarm_args <<<"${SMARM_ARGS:-}"
workloads=("$@")
if [[ ${#workloads[@]} -eq 0 ]]; then
    workloads=(spawn_join chained_spawn ping_pong_rtt ring_hop yield idle_bytes)
fi

log=$(mktemp "${TMPDIR:-/tmp}/bench-compare.XXXXXX")
if [[ ${KEEP_LOG:-0} != 1 ]]; then
    trap 'rm -f "$log"' EXIT
fi

status=0
# The peers' workload for a smarm-only variant: idle_bytes_release (a
# parked actor's stack given back) is measured against the peers'
# idle_bytes, whose lines are relabelled with the variant's name.
peer_workload() {
    case $1 in
    idle_bytes_release) echo idle_bytes ;;
    *) echo "$1" ;;
    esac
}

# run PROGRAM WORKLOAD: append its stdout and stderr to the log.
run() {
    local prog=$1 w=$2 pw
    pw=$(peer_workload "$w")
    echo "## round $round $prog $w" >>"$log"
    case $prog in
    smarm) "$bench" --workers "$workers" --runs "$runs" \
               ${smarm_args[@]+"${smarm_args[@]}"} "$w" >>"$log" 2>&1 ;;
    *) PEERS=$prog RUNS=$runs "$here/peers/run-peers.sh" "$workers" "$pw" \
           2>&1 | sed -E "s/(^# $prog |^)$pw([ ,])/\1$w\2/" >>"$log" ;;
    esac
}

for w in "${workloads[@]}"; do
    for ((round = 1; round <= rounds; round++)); do
        for prog in smarm $peers; do
            echo "bench-compare: $w round $round/$rounds: $prog" >&2
            if ! run "$prog" "$w"; then
                echo "bench-compare: $prog $w failed (see below)" >&2
                grep -v '^#' "$log" | tail -n 5 >&2 || true
                status=1
            fi
        done
    done
done

# Per-run lines: "# PROG WORKLOAD key=N runs: x x x ... [(warm-up y)]".
# CSV lines: "WORKLOAD,PROG,N,median".
awk -v workloads="${workloads[*]}" -v progs="smarm $peers" -v workers="$workers" '
function median(list,    a, n, i, j, t) {
    n = split(list, a, " ")
    if (n == 0) return ""
    for (i = 2; i <= n; i++)            # insertion sort, n is small
        for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) {
            t = a[j]; a[j] = a[j-1]; a[j-1] = t
        }
    return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
}
function ratio(x, y) {
    return (x == "" || y == "" || y + 0 == 0) ? "-" : sprintf("%.2f", x / y)
}
/^# (smarm|go|erlang) [a-z0-9_]+ [a-z]+=[0-9]+ runs:/ {
    key = $2 SUBSEP $3
    for (i = 6; i <= NF && $i !~ /^\(/; i++) samples[key] = samples[key] " " $i
    nruns[key] += i - 6
    next
}
/^[a-z0-9_]+,(smarm|go|erlang),[0-9]+,[0-9.]+$/ {
    split($0, f, ",")
    csv[f[2] SUBSEP f[1]] = csv[f[2] SUBSEP f[1]] " " f[4]
}
END {
    nw = split(workloads, W, " ")
    np = split(progs, P, " ")
    printf "ns per op (idle_bytes: bytes, fairness: ratio), %d worker(s) / GOMAXPROCS=%d / +S %d:%d; median of all timed runs\n", workers, workers, workers, workers
    printf "%-15s", "workload"
    for (p = 1; p <= np; p++) printf " %11s", P[p]
    for (p = 2; p <= np; p++) printf " %13s", "smarm/" P[p]
    printf "\n"
    for (k = 1; k <= nw; k++) {
        printf "%-15s", W[k]
        for (p = 1; p <= np; p++) {
            key = P[p] SUBSEP W[k]
            m[p] = (key in samples) ? median(samples[key]) : median(csv[key])
            printf " %11s", m[p] == "" ? "-" : sprintf(m[p] < 10 ? "%.3f" : "%.1f", m[p])
        }
        for (p = 2; p <= np; p++) printf " %13s", ratio(m[1], m[p])
        printf "\n"
    }
    printf "\nper-round medians (CSV):\n"
    for (k = 1; k <= nw; k++)
        for (p = 1; p <= np; p++) {
            key = P[p] SUBSEP W[k]
            printf "  %-15s %-7s%s  (%d runs)\n", W[k], P[p], csv[key], nruns[key]
        }
}' "$log"

if [[ ${KEEP_LOG:-0} == 1 ]]; then
    echo "log: $log" >&2
fi
exit $status
