#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench-scaling.sh - libsmarm on W workers against itself on 1, same session.
#
#   tools/bench-scaling.sh [build-dir] [workload...]
#
# build-dir (default build-rel; relative paths are tried from the current
# directory, then from the source root) holds tools/smarm-bench.  With no
# workload, the five the scheduler's scaling targets name are run:
# skynet_actor spawn_join chained_spawn ping_pong_rtt ring_hop.
#
# Each round runs `smarm-bench --workers 1 --runs RUNS` and then
# `--workers W --runs RUNS` over all the workloads, so a slow phase of a
# noisy machine hits both alike; ROUNDS rounds.  Per workload it prints
# the median of the round medians at 1 and at W workers and the median of
# the per-round ratios 1w/Ww (above 1: W workers are faster; this is the
# figure the targets are stated in, docs/benchmarks.md), then the
# per-round ratios, so their spread is visible.  A workload that prints
# no ns figure (fairness, wake_latency, idle_bytes) is rejected.
#
# Environment: RUNS (5), ROUNDS (6), WORKERS (2), SMARM_ARGS (extra
# smarm-bench options).  Exit status 1 if any run failed, 2 on misuse.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench-lib.sh
. "$here/bench-lib.sh"
bench_find bench-scaling.sh "${1:-build-rel}"
[[ $# -gt 0 ]] && shift
runs=${RUNS:-5}
rounds=${ROUNDS:-6}
workers=${WORKERS:-2}
read -r -a smarm_args <<<"${SMARM_ARGS:-}"
workloads=("$@")
if [[ ${#workloads[@]} -eq 0 ]]; then
    workloads=(skynet_actor spawn_join chained_spawn ping_pong_rtt ring_hop)
fi
for wl in "${workloads[@]}"; do
    case $wl in
    fairness | fairness_* | wake_latency | wake_latency_libc | idle_bytes)
        echo "bench-scaling.sh: $wl does not print ns per op" >&2
        exit 2
        ;;
    esac
done
if ! [[ $workers =~ ^[0-9]+$ && $workers -ge 2 ]]; then
    echo "bench-scaling.sh: WORKERS must be 2 or more (got $workers)" >&2
    exit 2
fi

raw=$(mktemp "${TMPDIR:-/tmp}/bench-scaling.XXXXXX")
trap 'rm -f "$raw"' EXIT
status=0
for ((r = 1; r <= rounds; r++)); do
    for w in 1 "$workers"; do
        echo "bench-scaling: round $r/$rounds: $w worker(s)" >&2
        out=$("$bench" --workers "$w" --runs "$runs" "${smarm_args[@]}" \
            "${workloads[@]}" 2>/dev/null) || status=1
        # WORKLOAD,smarm,W,ns -> "r W WORKLOAD ns"
        awk -F, -v r="$r" '$2 == "smarm" { print r, $3, $1, $4 }' \
            <<<"$out" >>"$raw"
    done
done

printf '%-20s %10s %10s %8s  %s\n' workload "1 w" "$workers w" "1w/${workers}w" \
    "per-round 1w/${workers}w"
for wl in "${workloads[@]}"; do
    awk -v wl="$wl" -v W="$workers" -v R="$rounds" '
    function median(a, n,    i, j, t) {
        for (i = 2; i <= n; i++)
            for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
                t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
            }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    $3 == wl && $2 == 1 { one[$1] = $4 }
    $3 == wl && $2 == W { many[$1] = $4 }
    END {
        n = 0; list = ""
        for (r = 1; r <= R; r++) {
            if (!(r in one) || !(r in many) || many[r] <= 0)
                continue
            n++; a[n] = one[r]; b[n] = many[r]; q[n] = one[r] / many[r]
            list = list sprintf(" %.2f", q[n])
        }
        if (n == 0) {
            printf "%-20s no complete round\n", wl
            exit 1
        }
        ma = median(a, n); mb = median(b, n); mq = median(q, n)
        printf "%-20s %10.1f %10.1f %8.2f  %s\n", wl, ma, mb, mq, list
    }' "$raw" || status=1
done
exit $status
