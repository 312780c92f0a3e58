#!/usr/bin/env bash
# run-peers.sh - build and run the Go and Erlang peer benchmarks.
#
#   run-peers.sh [procs] [workload...]
#
# procs (default 1) is GOMAXPROCS for Go and "+S procs:procs" for Erlang.
# No workload (or "all") runs every workload.  CSV lines go to stdout:
#
#   WORKLOAD,go,GOMAXPROCS,ns_per_op
#   WORKLOAD,erlang,SCHEDULERS,ns_per_op
#
# (idle_bytes: bytes per actor; fairness: a max/min ratio; wake_latency:
# p99 lateness in ns.)
# Per-run figures and notes go to stderr.  Environment knobs:
#   PEERS="go erlang"   which peers to run (default both)
#   RUNS=5              timed runs per workload (median reported)
#   BUDGET=18           rough seconds per workload; fewer runs if one is slow
#
# Build output goes to a temporary directory that is removed on exit; the
# source directory is never written to.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

procs=1
if [[ $# -gt 0 && $1 =~ ^[0-9]+$ ]]; then
    procs=$1
    shift
fi
if [[ $procs -lt 1 ]]; then
    echo "run-peers.sh: procs must be >= 1" >&2
    exit 2
fi
peers=${PEERS:-go erlang}
runs=${RUNS:-5}
budget=${BUDGET:-18}
workloads=("$@")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/smarm-peers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

status=0
for peer in $peers; do
    case $peer in
    go)
        command -v go >/dev/null || { echo "run-peers.sh: go not found" >&2; status=1; continue; }
        # GOPATH mode, single file: no go.mod, no module downloads.
        (cd "$tmp" && GO111MODULE=off GOFLAGS= go build -o "$tmp/peers-go" "$here/peers.go")
        "$tmp/peers-go" -procs "$procs" -runs "$runs" -budget "${budget}s" "${workloads[@]}" || status=1
        ;;
    erlang)
        command -v erlc >/dev/null || { echo "run-peers.sh: erlc not found" >&2; status=1; continue; }
        mkdir -p "$tmp/ebin"
        erlc -o "$tmp/ebin" "$here/peers.erl"
        # +P: skynet_actor keeps ~1.1M processes alive at once, actors_10m
        # 10M (the larger table only when it runs: it costs memory).
        plimit=2000000
        if [[ ${#workloads[@]} -eq 0 ]]; then
            plimit=16777216 # every workload
        fi
        for w in "${workloads[@]}"; do
            if [[ $w == actors_10m || $w == all ]]; then
                plimit=16777216
            fi
        done
        # Run from $tmp so a crash dump (erl_crash.dump) cannot land in the tree.
        (cd "$tmp" && erl +S "$procs:$procs" +P "$plimit" -noshell -pa "$tmp/ebin" \
            -run peers main "runs=$runs" "budget=$budget" "${workloads[@]}") || status=1
        ;;
    *)
        echo "run-peers.sh: unknown peer '$peer' (go, erlang)" >&2
        status=2
        ;;
    esac
done
exit $status
