# SPDX-License-Identifier: MIT
# bench-lib.sh - sourced by tools/bench-compare.sh and bench-scaling.sh.
#
# bench_find SCRIPT BUILD: sets `bench` to BUILD/tools/smarm-bench; a
# relative BUILD is tried from the current directory, then from the
# source root.  If it is not there, tells how to build it (as SCRIPT) and
# exits 2.
bench_find() {
    local script=$1 build=$2
    local root
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    if [[ ! -d $build && -d $root/$build ]]; then
        build=$root/$build
    fi
    bench=$build/tools/smarm-bench
    if [[ ! -x $bench ]]; then
        echo "$script: $bench not found; build first:" >&2
        echo "  meson setup build-rel --buildtype=release -Dtests=disabled" \
            "&& ninja -C build-rel" >&2
        exit 2
    fi
}
