#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# run-install-test.sh BUILD_DIR - install libsmarm into a staging
# directory and check it the way a packager and an embedder would:
#
#   - `meson install --destdir` succeeds and installs the pkg-config file
#     and the public headers;
#   - tests/install/consumer.c builds with `pkg-config --cflags --libs
#     smarm` (paths rewritten into the staging directory), links the
#     staged library (not the build tree's) and prints the expected text;
#   - the installed libsmarm.so.0 exports exactly the smarm_* symbols of
#     abi/libsmarm.map (version-node symbols such as SMARM_0.1 ignored)
#     and has SONAME libsmarm.so.0, with the libsmarm.so dev link;
#   - smarm.pc is relocatable: libdir and includedir follow ${prefix};
#   - libsmarm.a is installed beside libsmarm.so.0 and defines exactly
#     the map's smarm_* as global symbols (nothing internal);
#   - consumer.c links statically, with `cc -static ... $(pkg-config
#     --static ...)` and with the archive named beside a shared libc, as
#     docs/embedding.md "Static linking" says, and runs without
#     libsmarm.so;
#   - static_preempt.c checks that docs' statement on preemption in a
#     static link (never in the executable's text; in an allowed shared
#     object of the host's, yes) and, as a control, that the same
#     program linked with libsmarm.so is preempted in its own text;
#   - an install into a prefix of one's own runs exactly as
#     docs/embedding.md "Into a prefix of your own" says: its two shell
#     blocks are read from the page and run (in a separate build
#     directory under a temporary $HOME, so the caller's build directory
#     is never touched), building README's program, which then runs
#     without LD_LIBRARY_PATH against the prefix's libsmarm.so.0, and
#     docs/embedding.md "From Python"'s block, whose smarm.py finds the
#     prefix's library by itself;
#   - the ecosystem: oot_plugin.c, a plugin built out of tree with
#     `pkg-config --cflags --libs smarm`, runs under the installed
#     smarm-run; dl_host.c, a host not linked with libsmarm, dlopen()s
#     the installed libsmarm.so.0, loads that plugin and calls its
#     server from a plain thread;
#   - the shipped plugins (plugins/) and demo.app are installed in
#     smarm.pc's pluginsdir, which the installed smarm-run --help names,
#     and the installed demo runs there;
#   - smarm.py, the generated ctypes module, is installed in smarm.pc's
#     pythondir, and tests/python/ctypes_client.py, importing it from
#     there, calls the plugin's server from Python (skipped without
#     python3).
#
# Output is TAP (meson: protocol 'tap'); the exit status is 0 only when
# every check passed. Environment: CC (default cc), PKG_CONFIG (default
# pkg-config), NM (default nm), READELF (default readelf).

set -u

if [ $# -ne 1 ] || [ ! -d "$1" ]; then
	echo "usage: $0 BUILD_DIR" >&2
	exit 2
fi

BUILD=$(cd "$1" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
CC=${CC:-cc}
PKG_CONFIG=${PKG_CONFIG:-pkg-config}
NM=${NM:-nm}
READELF=${READELF:-readelf}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/smarm-install.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
STAGE=$TMP/stage

PLAN=25
n=0
failed=0

echo "1..$PLAN"

# diag TEXT... - print text as TAP comments (and nothing else).
diag() {
	printf '%s\n' "$@" | sed 's/^/# /'
}

ok() {
	n=$((n + 1))
	echo "ok $n - $1"
}

not_ok() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $1"
	shift
	[ $# -gt 0 ] && diag "$@"
}

# A known, reported defect: counts as an expected failure in TAP.
todo() {
	n=$((n + 1))
	echo "not ok $n - $1 # TODO $2"
	shift 2
	[ $# -gt 0 ] && diag "$@"
}

skip_rest() {
	while [ "$n" -lt "$PLAN" ]; do
		n=$((n + 1))
		failed=$((failed + 1))
		echo "not ok $n - not run: $1"
	done
	echo "$0: FAILED ($1)" >&2
	exit 1
}

# ---------------------------------------------------------------- 1
if out=$(meson install -C "$BUILD" --no-rebuild --quiet \
	--destdir "$STAGE" 2>&1); then
	ok "meson install --destdir into a staging directory"
else
	not_ok "meson install --destdir into a staging directory" "$out"
	skip_rest "meson install failed"
fi

# ---------------------------------------------------------------- 2
PC_FILE=$(find "$STAGE" -name smarm.pc -path '*/pkgconfig/*' | head -n 1)
if [ -z "$PC_FILE" ]; then
	not_ok "smarm.pc is installed" "no */pkgconfig/smarm.pc under $STAGE"
	skip_rest "smarm.pc missing"
fi
PC_DIR=$(dirname "$PC_FILE")

# The staged .pc comes first; the system's directories follow, for the
# packages smarm.pc requires (libffi).
SYS_PC=$(env -u PKG_CONFIG_PATH -u PKG_CONFIG_LIBDIR "$PKG_CONFIG" \
	--variable pc_path pkg-config 2>/dev/null)
pc() {
	PKG_CONFIG_PATH="$PC_DIR" PKG_CONFIG_LIBDIR="$PC_DIR${SYS_PC:+:$SYS_PC}" \
		"$PKG_CONFIG" "$@"
}

prefix=$(pc --variable=prefix smarm)
libdir=$(pc --variable=libdir smarm)
includedir=$(pc --variable=includedir smarm)
version=$(pc --modversion smarm)
if [ -n "$prefix" ] && [ -n "$libdir" ] && [ -n "$includedir" ] &&
	[ -n "$version" ] && [ "$PC_DIR" = "$STAGE$libdir/pkgconfig" ]; then
	ok "smarm.pc is installed in \$libdir/pkgconfig and resolves"
else
	not_ok "smarm.pc is installed in \$libdir/pkgconfig and resolves" \
		"pc dir:     $PC_DIR" "prefix:     $prefix" \
		"libdir:     $libdir" "includedir: $includedir" \
		"version:    $version"
fi

S_LIBDIR=$STAGE$libdir
S_INCDIR=$STAGE$includedir

# With a destdir the paths are rewritten into the stage. prefix alone is
# enough for a relocatable .pc; libdir and includedir are redefined too
# so this check does not depend on that (test 10 checks it separately).
pc_stage() {
	pc --define-variable=prefix="$STAGE$prefix" \
		--define-variable=libdir="$S_LIBDIR" \
		--define-variable=includedir="$S_INCDIR" "$@" smarm
}

# ---------------------------------------------------------------- 3
missing=""
for h in smarm.h errors.h version.h otp.h smarm_plugin.h; do
	[ -f "$S_INCDIR/smarm/$h" ] || missing="$missing $h"
done
if [ -z "$missing" ]; then
	ok "public headers are installed under \$includedir/smarm"
else
	not_ok "public headers are installed under \$includedir/smarm" \
		"missing:$missing (in $S_INCDIR/smarm)"
fi

# ---------------------------------------------------------------- 4
CFLAGS_PC=$(pc_stage --cflags)
LIBS_PC=$(pc_stage --libs)
EXE=$TMP/consumer
# shellcheck disable=SC2086 # pkg-config output is a word list
if out=$("$CC" -std=gnu11 -Wall -Wextra -Werror -o "$EXE" \
	"$HERE/consumer.c" $CFLAGS_PC $LIBS_PC 2>&1); then
	ok "consumer.c builds with pkg-config --cflags --libs smarm"
else
	not_ok "consumer.c builds with pkg-config --cflags --libs smarm" \
		"cflags: $CFLAGS_PC" "libs:   $LIBS_PC" "$out"
	skip_rest "consumer did not build"
fi

# ---------------------------------------------------------------- 5
resolved=$(LD_LIBRARY_PATH="$S_LIBDIR" ldd "$EXE" 2>&1 |
	awk '/libsmarm/ { print $3 }')
case "$resolved" in
"$STAGE"/*)
	ok "consumer loads the staged libsmarm.so.0"
	;;
*)
	not_ok "consumer loads the staged libsmarm.so.0" \
		"resolved to: '${resolved}'"
	;;
esac

# ---------------------------------------------------------------- 6
expected=$(printf 'smarm %s\nsum 5050\nroot 0' "$version")
if actual=$(LD_LIBRARY_PATH="$S_LIBDIR" "$EXE" 2>&1) &&
	[ "$actual" = "$expected" ]; then
	ok "consumer runs and prints the expected output"
else
	not_ok "consumer runs and prints the expected output" \
		"expected:" "$expected" "actual:" "$actual"
fi

# ---------------------------------------------------------------- 7
LIB=$S_LIBDIR/libsmarm.so.0
exported=$("$NM" -D --defined-only "$LIB" 2>&1 | awk 'NF { print $NF }' |
	sed 's/@.*//' | grep -Ev '^SMARM_[0-9]+(\.[0-9]+)*$' | sort -u)
foreign=$(printf '%s\n' "$exported" | grep -Ev '^smarm_[A-Za-z0-9]' |
	grep -v '^$')
if [ -n "$exported" ] && [ -z "$foreign" ]; then
	ok "libsmarm.so.0 exports only smarm_* symbols"
else
	not_ok "libsmarm.so.0 exports only smarm_* symbols" \
		"unexpected exports:" "${foreign:-(none; nm output empty?)}"
fi

# ---------------------------------------------------------------- 8
declared=$(grep -oE '^[[:space:]]*smarm_[A-Za-z0-9_]+[[:space:]]*;' \
	"$SRC/abi/libsmarm.map" | tr -d ' \t;' | sort -u)
only_map=$(comm -23 <(printf '%s\n' "$declared") \
	<(printf '%s\n' "$exported"))
only_lib=$(comm -13 <(printf '%s\n' "$declared") \
	<(printf '%s\n' "$exported"))
if [ -n "$declared" ] && [ -z "$only_map" ] && [ -z "$only_lib" ]; then
	ok "exports match abi/libsmarm.map ($(printf '%s\n' "$declared" |
		wc -l) symbols)"
else
	not_ok "exports match abi/libsmarm.map" \
		"in the map, not exported: ${only_map:-(none)}" \
		"exported, not in the map: ${only_lib:-(none)}"
fi

# ---------------------------------------------------------------- 9
soname=$("$READELF" -d "$LIB" 2>&1 | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
dev=$(readlink -f "$S_LIBDIR/libsmarm.so" 2>/dev/null)
real=$(readlink -f "$LIB")
if [ "$soname" = "libsmarm.so.0" ] && [ -n "$dev" ] && [ "$dev" = "$real" ]
then
	ok "SONAME is libsmarm.so.0 and libsmarm.so links to it"
else
	not_ok "SONAME is libsmarm.so.0 and libsmarm.so links to it" \
		"SONAME: '$soname'" "libsmarm.so -> '$dev'" \
		"libsmarm.so.0 -> '$real'"
fi

# --------------------------------------------------------------- 10
# A relocatable .pc lets `--define-variable=prefix=DIR` (or pkgconf's
# --define-prefix) move every path. smarm.pc.in is filled with absolute
# libdir/includedir today, so a prefix rewrite does not move them.
reloc_lib=$(pc --define-variable=prefix="$STAGE$prefix" \
	--variable=libdir smarm)
reloc_inc=$(pc --define-variable=prefix="$STAGE$prefix" \
	--variable=includedir smarm)
if [ "$reloc_lib" = "$S_LIBDIR" ] && [ "$reloc_inc" = "$S_INCDIR" ]; then
	ok "smarm.pc is relocatable (libdir, includedir follow \${prefix})"
else
	todo "smarm.pc is relocatable (libdir, includedir follow \${prefix})" \
		"smarm.pc.in is filled with absolute paths" \
		"libdir with prefix=$STAGE$prefix: $reloc_lib" \
		"includedir with prefix=$STAGE$prefix: $reloc_inc"
fi

# --------------------------------------------------------------- 11
ARCHIVE=$S_LIBDIR/libsmarm.a
if [ -f "$ARCHIVE" ]; then
	globals=$("$NM" --defined-only -g "$ARCHIVE" 2>&1 |
		awk 'NF == 3 { print $3 }' | sort -u)
	only_map=$(comm -23 <(printf '%s\n' "$declared") \
		<(printf '%s\n' "$globals"))
	only_ar=$(comm -13 <(printf '%s\n' "$declared") \
		<(printf '%s\n' "$globals"))
	if [ -n "$globals" ] && [ -z "$only_map" ] && [ -z "$only_ar" ]; then
		ok "libsmarm.a is installed; its globals are the map's smarm_*"
	else
		not_ok "libsmarm.a is installed; its globals are the map's smarm_*" \
			"in the map, not global: ${only_map:-(none)}" \
			"global, not in the map: ${only_ar:-(none)}"
	fi
else
	not_ok "libsmarm.a is installed; its globals are the map's smarm_*" \
		"no $ARCHIVE"
fi

# needed FILE - the DT_NEEDED entries of an ELF file, one per line.
needed() {
	"$READELF" -d "$1" 2>/dev/null |
		sed -n 's/.*(NEEDED).*\[\(.*\)\].*/\1/p'
}

# run_plain EXE ARGS... - run with no library path of the caller's.
run_plain() {
	env -u LD_LIBRARY_PATH -u LD_PRELOAD "$@"
}

# --------------------------------------------------------------- 12
# The docs' fully static link: cc -static app.c $(pkg-config --static
# --cflags --libs smarm). The linker's warning about dlopen in a static
# program is expected (docs/embedding.md).
LIBS_STATIC=$(pc_stage --static --libs)
STATIC_EXE=$TMP/consumer-static
# shellcheck disable=SC2086
if out=$("$CC" -static -std=gnu11 -Wall -Wextra -Werror -o "$STATIC_EXE" \
	"$HERE/consumer.c" $CFLAGS_PC $LIBS_STATIC 2>&1); then
	ok "consumer.c links with cc -static and pkg-config --static"
else
	not_ok "consumer.c links with cc -static and pkg-config --static" \
		"libs: $LIBS_STATIC" "$out"
fi

# --------------------------------------------------------------- 13
if [ -x "$STATIC_EXE" ] && [ -z "$(needed "$STATIC_EXE")" ] &&
	! "$READELF" -l "$STATIC_EXE" | grep -q INTERP &&
	actual=$(run_plain "$STATIC_EXE" 2>&1) &&
	[ "$actual" = "$expected" ]; then
	ok "the -static consumer has no dynamic dependency and runs"
else
	not_ok "the -static consumer has no dynamic dependency and runs" \
		"needed: $(needed "$STATIC_EXE" 2>&1 | tr '\n' ' ')" \
		"expected:" "$expected" "actual:" "${actual:-}"
fi

# --------------------------------------------------------------- 14
# The docs' archive link beside a shared libc: cc app.c $(pkg-config
# --cflags smarm) "$(pkg-config --variable=libdir smarm)/libsmarm.a"
# -pthread -lffi
AR_EXE=$TMP/consumer-archive
# shellcheck disable=SC2086
if out=$("$CC" -std=gnu11 -Wall -Wextra -Werror -o "$AR_EXE" \
	"$HERE/consumer.c" $CFLAGS_PC "$(pc_stage --variable=libdir)/libsmarm.a" \
	-pthread -lffi 2>&1) &&
	! needed "$AR_EXE" | grep -q libsmarm &&
	actual=$(run_plain "$AR_EXE" 2>&1) && [ "$actual" = "$expected" ]; then
	ok "consumer.c linked with libsmarm.a needs no libsmarm.so and runs"
else
	not_ok "consumer.c linked with libsmarm.a needs no libsmarm.so and runs" \
		"$out" "needed: $(needed "$AR_EXE" 2>&1 | tr '\n' ' ')" \
		"expected:" "$expected" "actual:" "${actual:-}"
fi

# --------------------------------------------------------------- 15
# Preemption in a static link (docs/embedding.md "Static linking"): a
# -static program's own text is never preempted, and cannot be allowed.
SP_STATIC=$TMP/static_preempt-static
# shellcheck disable=SC2086
if out=$("$CC" -static -std=gnu11 -Wall -Wextra -Werror -o "$SP_STATIC" \
	"$HERE/static_preempt.c" $CFLAGS_PC $LIBS_STATIC 2>&1) &&
	out=$(run_plain "$SP_STATIC" exe 2>&1); then
	ok "-static: the executable's text is never preempted"
	diag "$out"
else
	not_ok "-static: the executable's text is never preempted" "$out"
fi

# --------------------------------------------------------------- 16
# With libsmarm.a beside a shared libc: the executable's text is not
# preemptible either, a shared object of the host's is once allowed.
SP_AR=$TMP/static_preempt-archive
# shellcheck disable=SC2086
if out=$("$CC" -std=gnu11 -Wall -Wextra -Werror -shared -fPIC \
	-o "$TMP/libhostcode.so" "$HERE/hostcode.c" 2>&1) &&
	out=$("$CC" -std=gnu11 -Wall -Wextra -Werror -DWITH_HOSTCODE \
		-o "$SP_AR" "$HERE/static_preempt.c" $CFLAGS_PC \
		"$(pc_stage --variable=libdir)/libsmarm.a" -pthread -lffi \
		-L"$TMP" -lhostcode -Wl,-rpath,"$TMP" 2>&1) &&
	out_exe=$(run_plain "$SP_AR" exe 2>&1) &&
	out_so=$(run_plain "$SP_AR" so 2>&1); then
	ok "libsmarm.a: host text not preempted, an allowed host .so is"
	diag "exe: $out_exe" "so:  $out_so"
else
	not_ok "libsmarm.a: host text not preempted, an allowed host .so is" \
		"$out" "exe: ${out_exe:-}" "so:  ${out_so:-}"
fi

# --------------------------------------------------------------- 17
# Control: the same program on libsmarm.so is preempted in its own text,
# so 15 and 16 measure the static link, not a preemption that is off.
SP_SO=$TMP/static_preempt-shared
# shellcheck disable=SC2086
if out=$("$CC" -std=gnu11 -Wall -Wextra -Werror -o "$SP_SO" \
	"$HERE/static_preempt.c" $CFLAGS_PC $LIBS_PC 2>&1); then
	out=$(LD_LIBRARY_PATH="$S_LIBDIR" "$SP_SO" exe 2>&1)
	case "$out" in
	"allow SMARM_OK, spinner preempted "*)
		ok "control: linked with libsmarm.so, its own text is preempted"
		diag "$out"
		;;
	*)
		not_ok "control: linked with libsmarm.so, its own text is preempted" \
			"$out"
		;;
	esac
else
	not_ok "control: linked with libsmarm.so, its own text is preempted" \
		"$out"
fi

# --------------------------------------------------------------- 18
# A prefix of one's own, exactly as docs/embedding.md says: its two
# blocks, run in one shell under a temporary $HOME (the docs' prefix is
# $HOME/opt/smarm). The build directory the docs name, build-prefix, is
# put under $TMP instead of the source tree; nothing else is changed.
# doc_block FILE MARK - the fenced block after the line "<!-- MARK -->".
doc_block() {
	awk -v m="<!-- $2 -->" '
		$0 == m { st = 1; next }
		st == 1 && /^```/ { st = 2; next }
		st == 2 && /^```/ { exit }
		st == 2 { print }' "$1"
}
DOC=$SRC/docs/embedding.md
install_block=$(doc_block "$DOC" install-test:\ prefix-install)
build_block=$(doc_block "$DOC" install-test:\ prefix-build)
python_block=$(doc_block "$DOC" install-test:\ prefix-python)
program=$(doc_block "$SRC/README.md" .ci/run:\ readme-program)
mkdir -p "$TMP/home" "$TMP/app"
printf '%s\n' "$program" >"$TMP/app/app.c"
{
	echo 'set -eu'
	printf 'cd %q\n' "$SRC"
	printf '%s\n' "$install_block" |
		sed "s|build-prefix|$TMP/build-prefix|g"
	printf 'cd %q\n' "$TMP/app"
	printf '%s\n' "$build_block"
	echo 'ldd ./a.out'
	if command -v python3 >/dev/null; then
		printf '%s\n' "$python_block"
	else
		echo "echo 'smarm.py: $version'"
	fi
} >"$TMP/prefix-flow.sh"
if [ -z "$install_block" ] || [ -z "$build_block" ] || [ -z "$program" ] ||
	[ -z "$python_block" ]; then
	not_ok "custom prefix: the docs' commands install, build and run" \
		"blocks not found in docs/embedding.md or README.md"
elif out=$(HOME=$TMP/home env -u LD_LIBRARY_PATH -u PKG_CONFIG_PATH \
	-u PKG_CONFIG_LIBDIR bash "$TMP/prefix-flow.sh" 2>&1) &&
	printf '%s\n' "$out" | grep -qx 'hello from an actor' &&
	printf '%s\n' "$out" | grep -q "libsmarm.so.0 => $TMP/home/opt/smarm/" &&
	printf '%s\n' "$out" | grep -qx "smarm.py: $version"
then
	ok "custom prefix: the docs' commands install, build and run"
else
	not_ok "custom prefix: the docs' commands install, build and run" \
		"script:" "$(cat "$TMP/prefix-flow.sh")" "output:" \
		"$(printf '%s\n' "$out" | tail -n 30)"
fi

# --------------------------------------------------------------- 19
# The ecosystem: an out-of-tree plugin built against the staged install
# with pkg-config, loaded by the staged smarm-run, by a host that is not
# linked with libsmarm, and by Python through ctypes.
OOT=$TMP/adder.so
# shellcheck disable=SC2086 # pkg-config output is a word list
if out=$("$CC" -std=gnu11 -Wall -Wextra -Werror -shared -fPIC -o "$OOT" \
	"$HERE/oot_plugin.c" $CFLAGS_PC $LIBS_PC 2>&1); then
	ok "an out-of-tree plugin builds with pkg-config --cflags --libs smarm"
else
	not_ok "an out-of-tree plugin builds with pkg-config --cflags --libs smarm" \
		"$out"
fi

# --------------------------------------------------------------- 20
RUN_EXE=$(find "$STAGE" -name smarm-run -type f | head -n 1)
cat >"$TMP/oot.app" <<'APP'
app oot
run 1s
plugin adder ./adder.so
supervisor root one_for_one
  server adder.adder name=adder args="start=5"
APP
if [ -z "$RUN_EXE" ]; then
	not_ok "the installed smarm-run runs an app of the out-of-tree plugin" \
		"no bin/smarm-run under $STAGE"
elif out=$(cd / && LD_LIBRARY_PATH="$S_LIBDIR" timeout 60 "$RUN_EXE" -q \
	"$TMP/oot.app" 2>&1) &&
	printf '%s\n' "$out" | tail -n 1 |
	grep -Eqx 'smarm-run: oot: done after [0-9.]+ s: [0-9]+ requests \([0-9]+/s\), 0 restarts'
then
	ok "the installed smarm-run runs an app of the out-of-tree plugin"
else
	not_ok "the installed smarm-run runs an app of the out-of-tree plugin" \
		"$out"
fi

# --------------------------------------------------------------- 21
# The shipped plugins, one per folder of plugins/, and demo.app beside
# them in pluginsdir (${libdir}/smarm/plugins).
pluginsdir=$(pc --variable=pluginsdir smarm)
S_PLUGDIR=$(pc_stage --variable=pluginsdir)
missing=""
for d in "$SRC"/plugins/*/; do
	name=$(basename "$d")
	[ -f "$d/$name.c" ] || continue
	[ -f "$S_PLUGDIR/$name.so" ] || missing="$missing $name.so"
done
[ -f "$S_PLUGDIR/demo.app" ] || missing="$missing demo.app"
if [ -n "$pluginsdir" ] && [ "$pluginsdir" = "$libdir/smarm/plugins" ] &&
	[ "$S_PLUGDIR" = "$STAGE$pluginsdir" ] && [ -z "$missing" ]; then
	ok "the shipped plugins and demo.app are in pkg-config's pluginsdir"
else
	not_ok "the shipped plugins and demo.app are in pkg-config's pluginsdir" \
		"pluginsdir: '$pluginsdir' (libdir '$libdir')" \
		"staged:     '$S_PLUGDIR'" "missing:$missing"
fi

# --------------------------------------------------------------- 22
# The installed smarm-run names that directory in --help, and runs the
# installed demo from it (its plugin paths are relative to the file).
if [ -z "$RUN_EXE" ]; then
	not_ok "the installed smarm-run names pluginsdir and runs its demo" \
		"no bin/smarm-run under $STAGE"
elif ! help=$(LD_LIBRARY_PATH="$S_LIBDIR" "$RUN_EXE" --help 2>&1) ||
	! printf '%s\n' "$help" | grep -qxF "  $pluginsdir"; then
	not_ok "the installed smarm-run names pluginsdir and runs its demo" \
		"--help does not name $pluginsdir:" "$help"
elif out=$(cd / && LD_LIBRARY_PATH="$S_LIBDIR" timeout 60 "$RUN_EXE" -q \
	-t 1s "$S_PLUGDIR/demo.app" 2>&1) &&
	printf '%s\n' "$out" | tail -n 1 |
	grep -Eqx 'smarm-run: demo: done after [0-9.]+ s: [0-9]+ requests \([0-9]+/s\), [0-9]+ restarts?'
then
	ok "the installed smarm-run names pluginsdir and runs its demo"
else
	not_ok "the installed smarm-run names pluginsdir and runs its demo" \
		"$out"
fi

# --------------------------------------------------------------- 23
# shellcheck disable=SC2086
if ! out=$("$CC" -std=gnu11 -Wall -Wextra -Werror -o "$TMP/dl_host" \
	"$HERE/dl_host.c" $CFLAGS_PC -ldl -lpthread 2>&1); then
	not_ok "a host not linked with libsmarm dlopens it and calls a server" \
		"$out"
elif "$READELF" -d "$TMP/dl_host" | grep -q 'NEEDED.*libsmarm'; then
	not_ok "a host not linked with libsmarm dlopens it and calls a server" \
		"dl_host links libsmarm"
elif out=$(env -u LD_LIBRARY_PATH timeout 60 "$TMP/dl_host" \
	"$S_LIBDIR/libsmarm.so.0" "$OOT" 2>&1) && [ "$out" = "dl host: ok" ]
then
	ok "a host not linked with libsmarm dlopens it and calls a server"
else
	not_ok "a host not linked with libsmarm dlopens it and calls a server" \
		"$out"
fi

# --------------------------------------------------------------- 24
pythondir=$(pc --variable=pythondir smarm)
S_PYDIR=$(pc_stage --variable=pythondir)
if [ -n "$pythondir" ] && [ "$S_PYDIR" = "$STAGE$pythondir" ] &&
	[ -f "$S_PYDIR/smarm.py" ]; then
	ok "smarm.py is installed in pkg-config's pythondir"
else
	not_ok "smarm.py is installed in pkg-config's pythondir" \
		"pythondir: '$pythondir'" "staged:    '$S_PYDIR'" \
		"$(find "$STAGE" -name smarm.py)"
fi

# --------------------------------------------------------------- 25
if ! command -v python3 >/dev/null; then
	n=$((n + 1))
	echo "ok $n - a Python client calls a server through smarm.py # SKIP python3 not found"
elif out=$(env -u LD_LIBRARY_PATH PYTHONPATH="$S_PYDIR" \
	SMARM_LIBRARY="$S_LIBDIR/libsmarm.so.0" timeout 60 python3 \
	"$SRC/tests/python/ctypes_client.py" "$OOT" 2>&1) &&
	[ "$out" = "python client: ok" ]; then
	ok "a Python client calls a server through smarm.py"
else
	not_ok "a Python client calls a server through smarm.py" "$out"
fi

if [ "$failed" -ne 0 ]; then
	echo "$0: $failed of $PLAN checks failed" >&2
	exit 1
fi
exit 0
