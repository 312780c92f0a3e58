#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# run-smarm-top-test.sh SMARM_TOP SMARM_RUN DEMO_APP - the observer end
# to end (docs/observability.md), TAP output, against a live demo run by
# smarm-run -S:
#
#   - --once prints the header and a row per actor of the demo, with
#     a supervisor's restarts and a server's plugin's faults;
#   - --json prints the node's answers as one JSON object;
#   - attached by the serving process's pid, it finds the socket;
#   - smarm-run --status prints every child of the tree;
#   - in a real terminal (tmux: new-session, send-keys, capture-pane):
#     the live table; m sorts by memory; t shows the supervision tree
#     and a key goes back; / filters by name; Enter opens the actor
#     under the cursor (its links and monitors); q quits;
#   - a path where no node listens exits 1;
#   - smarm-run --stats prints every node counter once the tree ended.
# Skips cleanly (TAP "1..0 # SKIP") only when tmux is not installed.
# Every run is bounded by timeout(1).

set -u

if [ $# -ne 3 ]; then
	echo "usage: $0 SMARM_TOP SMARM_RUN DEMO_APP" >&2
	exit 2
fi
TOP=$1
RUN=$2
DEMO=$3
if ! command -v tmux >/dev/null; then
	echo "1..0 # SKIP tmux not installed"
	exit 0
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/smarm-top-test.XXXXXX") || exit 1
SOCK=$TMP/node.sock
SESSION=smarm-top-test-$$
export TMUX_TMPDIR=$TMP # a tmux server of our own
cleanup() {
	tmux kill-server 2>/dev/null
	[ -n "${RUNPID:-}" ] && kill "$RUNPID" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

PLAN=14
n=0
failed=0
echo "1..$PLAN"
diag() { printf '%s\n' "$@" | sed 's/^/# /'; }
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"
	shift; [ $# -gt 0 ] && diag "$@"
}
check() { # name, condition-result (0 ok), diagnostics...
	local name=$1 rc=$2
	shift 2
	if [ "$rc" -eq 0 ]; then ok "$name"; else not_ok "$name" "$@"; fi
}
# Wait (10 s at most) until the pane shows a line matching $1.
pane=""
await_pane() {
	for _ in $(seq 1 100); do
		pane=$(tmux capture-pane -p -t "$SESSION" 2>/dev/null)
		grep -qE "$1" <<<"$pane" && return 0
		sleep 0.1
	done
	return 1
}

# The demo, serving its socket, for long enough.
timeout 120 "$RUN" -q -w 4 -t 90s -S "$SOCK" "$DEMO" >"$TMP/run.out" \
	2>"$TMP/run.err" &
RUNPID=$!
for _ in $(seq 1 100); do [ -S "$SOCK" ] && break; sleep 0.1; done

# 1. --once
out=$(timeout 30 "$TOP" --once -d 0.5 "$SOCK" 2>&1); rc=$?
[ "$rc" -eq 0 ] && grep -q '^workers [0-9]' <<<"$out" &&
	grep -qE '^[0-9]+\.[0-9]+ +counter +counter +(parked|queued|running)' \
		<<<"$out" &&
	grep -q 'supervisor' <<<"$out"
check "--once prints the header and the demo's actors" $? "exit $rc" "$out"

# 1b. restarts and faults: a supervisor's own count, a server's plugin's
out=$(timeout 30 "$TOP" --once -d 0.2 -s restarts "$SOCK" 2>&1); rc=$?
[ "$rc" -eq 0 ] && grep -q ' RST  FLT$' <<<"$out" &&
	grep -qE ' supervisor .* [0-9]+ +-$' <<<"$out" &&
	grep -qE ' crasher .* [0-9]+ +[0-9]+$' <<<"$out"
check "--once shows restarts per supervisor and plugin faults" $? \
	"exit $rc" "$out"

# 2. --json
out=$(timeout 30 "$TOP" --json "$SOCK" 2>&1); rc=$?
[ "$rc" -eq 0 ] && grep -q '^{"hello":{"v":3,' <<<"$out" &&
	grep -q '"snapshot":{"v":3,"now_ns":[0-9]*,"actors":\[' <<<"$out" &&
	grep -q '"name":"kv"' <<<"$out"
check "--json prints the node's answers as one object" $? "exit $rc" \
	"$(head -c 2000 <<<"$out")"

# 3. by pid
launcher=$(ps -o pid= --ppid "$RUNPID" | tr -d ' ')
out=$(timeout 30 "$TOP" --once -d 0.2 -f loadgen "${launcher:-0}" 2>&1); rc=$?
[ "$rc" -eq 0 ] && grep -q "$SOCK" <<<"$out" &&
	grep -qE ' loadgen +loadgen ' <<<"$out" &&
	! grep -qE ' counter +counter ' <<<"$out"
check "attached by pid, filtered by name" $? "exit $rc" "$out"

# 4. smarm-run --status
out=$(timeout 30 "$RUN" --status "$SOCK" 2>&1); rc=$?
[ "$rc" -eq 0 ] && grep -qE '^  counter +[0-9]+\.[0-9]+ +counter \(counter\)' \
	<<<"$out" && grep -qE '^    kv ' <<<"$out"
check "smarm-run --status prints every child" $? "exit $rc" "$out"

# 5-11. the live table in a terminal
tmux new-session -d -s "$SESSION" -x 160 -y 45 \
	"timeout --foreground 100 '$TOP' -d 0.3 '$SOCK'; echo smarm-top-exit=\$?; sleep 30"
await_pane '^[0-9]+\.[0-9]+ +loadgen +loadgen +parked' &&
	grep -q '^workers [0-9]' <<<"$pane" && grep -q 'sort: cpu' <<<"$pane"
check "the live table shows the demo's actors" $? "$pane"

tmux send-keys -t "$SESSION" m
await_pane 'sort: memory'
check "m sorts by memory" $? "$pane"

tmux send-keys -t "$SESSION" t
await_pane '^supervision tree of' &&
	grep -qE '^  [0-9]+\.[0-9]+ counter counter of counter' <<<"$pane" &&
	grep -qE '^    [0-9]+\.[0-9]+ kv kv of kv' <<<"$pane"
check "t shows the supervision tree" $? "$pane"

tmux send-keys -t "$SESSION" x
await_pane '^PID +NAME'
check "a key goes back to the table" $? "$pane"

tmux send-keys -t "$SESSION" / k v Enter
await_pane 'filter: kv' && grep -qE ' kv +kv ' <<<"$pane" &&
	! grep -qE ' counter +counter ' <<<"$pane"
check "/ filters by name" $? "$pane"

tmux send-keys -t "$SESSION" Enter
await_pane '^monitored_by ' && grep -qE '^name +kv$' <<<"$pane" &&
	grep -qE '^links +[0-9]+\.[0-9]+' <<<"$pane"
check "Enter opens the actor: its record, links and monitors" $? "$pane"

tmux send-keys -t "$SESSION" x
await_pane '^PID +NAME' && tmux send-keys -t "$SESSION" q &&
	await_pane '^smarm-top-exit=0$'
check "q quits (exit 0)" $? "$pane"

# 12. no node there
timeout 30 "$TOP" --once "$TMP/nothing.sock" >/dev/null 2>&1
rc=$?
[ "$rc" -eq 1 ]
check "a path where no node listens exits 1" $? "exit $rc"

# 13. smarm-run --stats
out=$(timeout 60 "$RUN" -q -w 2 -t 1s --stats "$DEMO" 2>/dev/null); rc=$?
[ "$rc" -eq 0 ] && grep -qE '^stat SERVER_REQUESTS [1-9][0-9]*$' <<<"$out" &&
	grep -qE '^stat SUP_RESTARTS [0-9]+$' <<<"$out" &&
	[ "$(grep -c '^stat ' <<<"$out")" -ge 30 ]
check "smarm-run --stats prints every node counter at the end" $? \
	"exit $rc" "$out"

[ "$n" -eq "$PLAN" ] || echo "# planned $PLAN, ran $n"
[ "$failed" -eq 0 ]
