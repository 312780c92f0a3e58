# SPDX-License-Identifier: MIT
"""check_causal.py - parse a libsmarm causal profile and check it.

Usage: check_causal.py FILE MIN_EXPERIMENTS SITES POINTS

The file is Coz's profile format as JSON lines, the way Coz's viewer
(viewer/ts/profile.ts, parseLine) reads it: every line one JSON object
with a "type". It must open with a "startup" line and close with a
"runtime" line; every "experiment" line (selected, speedup, duration,
selected_samples) is followed by exactly one line per progress point
("throughput-point": name, delta; "latency-point": name, arrivals,
departures, difference) and every delta or arrivals count is at least 5
(an experiment that moved less is not written); "samples" lines name a
known site. SITES and POINTS are comma-separated names: each selected
site must be one of SITES (SITES "*": any name, as a sampled profile's
functions), each point one of POINTS, and every point
must appear after every experiment. Speedups are multiples of 0.05 in
[0, 1]; with MIN_EXPERIMENTS or more of them, the share at 0 is about a
quarter (Coz: weight 7 of 27; accepted 0.08 .. 0.48) and at least 10
different speedups occur.
Exit status 0: all good; 1: a problem, printed.
"""
import json
import sys


def fail(msg):
    print("# check_causal: " + msg)
    sys.exit(1)


def need(obj, key, kind, line):
    if key not in obj or not isinstance(obj[key], kind):
        fail("line %d: %s needs %s %s" % (line, obj.get("type"), key,
                                          kind.__name__))
    return obj[key]


def main():
    if len(sys.argv) != 5:
        fail("usage: check_causal.py FILE MIN_EXPERIMENTS SITES POINTS")
    path, want = sys.argv[1], int(sys.argv[2])
    sites = set(sys.argv[3].split(","))
    points = set(sys.argv[4].split(","))
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    recs = []
    for i, text in enumerate(lines, 1):
        if not text.startswith("{"):
            fail("line %d is not a JSON line: %r" % (i, text))
        try:
            recs.append((i, json.loads(text)))
        except ValueError as e:
            fail("line %d: %s" % (i, e))
    if not recs or recs[0][1].get("type") != "startup":
        fail("no startup line first")
    need(recs[0][1], "time", int, 1)
    if recs[-1][1].get("type") != "runtime":
        fail("no runtime line last")
    need(recs[-1][1], "time", int, recs[-1][0])
    exps = []
    cur = None
    for i, r in recs[1:-1]:
        t = r.get("type")
        if t == "experiment":
            if cur is not None and cur["seen"] != points:
                fail("line %d: experiment before %s" %
                     (i, points - cur["seen"]))
            sel = need(r, "selected", str, i)
            if "*" not in sites and sel not in sites:
                fail("line %d: unknown site %r" % (i, sel))
            sp = r.get("speedup")
            if not isinstance(sp, (int, float)) or not 0 <= sp <= 1 or \
                    abs(sp * 20 - round(sp * 20)) > 1e-6:
                fail("line %d: speedup %r" % (i, sp))
            if need(r, "duration", int, i) <= 0:
                fail("line %d: duration not positive" % i)
            need(r, "selected_samples", int, i)
            cur = {"speedup": round(sp * 20), "seen": set()}
            exps.append(cur)
        elif t in ("throughput-point", "latency-point"):
            if cur is None:
                fail("line %d: a point before any experiment" % i)
            name = need(r, "name", str, i)
            if name not in points or name in cur["seen"]:
                fail("line %d: point %r unknown or repeated" % (i, name))
            cur["seen"].add(name)
            if t == "throughput-point":
                n = need(r, "delta", int, i)
            else:
                n = need(r, "arrivals", int, i)
                need(r, "departures", int, i)
                need(r, "difference", int, i)
            if n < 5:
                fail("line %d: %s moved %d < 5" % (i, name, n))
        elif t == "samples":
            loc = need(r, "location", str, i)
            if "*" not in sites and loc not in sites:
                fail("line %d: samples of an unknown site" % i)
            if need(r, "count", int, i) <= 0:
                fail("line %d: samples count not positive" % i)
        else:
            fail("line %d: unexpected type %r" % (i, t))
    if cur is not None and cur["seen"] != points:
        fail("last experiment misses %s" % (points - cur["seen"]))
    if len(exps) < want:
        fail("%d experiments, wanted %d" % (len(exps), want))
    if want > 0:
        zero = sum(1 for e in exps if e["speedup"] == 0) / len(exps)
        steps = len(set(e["speedup"] for e in exps))
        if not 0.08 <= zero <= 0.48:
            fail("share at speedup 0 is %.2f of %d" % (zero, len(exps)))
        if steps < 10:
            fail("only %d different speedups" % steps)
    print("# check_causal: %d experiments ok" % len(exps))


main()
