# SPDX-License-Identifier: MIT
"""check_trace.py - parse a libsmarm trace file and check its structure.

Usage: check_trace.py json|proto FILE [want ...]

json:  the file must parse with Python's json module (after close it is
       a complete array), and every line between the first and the last
       must be one whole event followed by a comma (so any prefix cut at
       a line is a readable Chrome JSON trace for Perfetto).
proto: the file is decoded here against Perfetto's field numbers
       (Trace.packet 1; TracePacket timestamp 8, track_event 11,
       track_descriptor 60; TrackEvent type 9, track_uuid 11,
       categories 22, name 23, flow_ids 47 and terminating_flow_ids
       48, both fixed64; a flow may start on an instant of its own
       (category "flow") or on an event's, and end on a slice begin;
       TrackDescriptor uuid 1, name 2, thread 4).
Both: slices nest strictly per track (here: never overlap), every flow
has both ends, each bound inside a slice of its track; every track used
has a name. Each `want` argument is a substring that some event name
must contain ("call add"), or "name~N" for at least N events whose name
contains name ("send~50" counts flows named send, and the send
instants); "flow:NAME" is a flow's start named NAME ("flow:send~50");
"instant:NAME=N" is exactly N instants named NAME (not the flow
category's: an instant that also starts a flow counts)
("instant:recv=400": every receive of a scenario, none twice), and
"flow:NAME=N" exactly N flow starts named NAME ("flow:send=400").
Exit status 0: all good; 1: a problem, printed.
"""
import json
import sys


def fail(msg):
    print("# check_trace: " + msg)
    sys.exit(1)


def ns(x):
    return int(round(float(x) * 1000))


def check_slices(slices, what):
    """slices: track -> list of (t0, t1, name). No overlap per track."""
    for track, ss in slices.items():
        ss.sort()
        for a, b in zip(ss, ss[1:]):
            if b[0] < a[1]:
                fail("%s: slices overlap on track %s: %r %r"
                     % (what, track, a, b))


def inside(slices, track, t):
    for t0, t1, _ in slices.get(track, []):
        if t0 <= t <= t1:
            return True
    return False


def check_wants(names, wants, instants):
    for w in wants:
        if w.startswith("instant:"):
            text, n = w[len("instant:"):].split("=")
            got = sum(1 for x in instants if x == text)
            if got != int(n):
                fail("want exactly %d instants named '%s', got %d"
                     % (int(n), text, got))
        elif w.startswith("flow:") and "=" in w:
            text, n = w.split("=")
            got = sum(1 for x in names if x == text)
            if got != int(n):
                fail("want exactly %d flows named '%s', got %d"
                     % (int(n), text[len("flow:"):], got))
        elif "~" in w:
            text, n = w.split("~")
            got = sum(1 for x in names if text in x)
            if got < int(n):
                fail("want %d events named '%s', got %d" % (int(n), text, got))
        elif not any(w in x for x in names):
            fail("no event named '%s'" % w)


def check_json(path, wants):
    with open(path) as f:
        text = f.read()
    lines = text.split("\n")
    if lines[0] != "[":
        fail("json: first line is not '['")
    body = [x for x in lines[1:] if x not in ("", "]")]
    for x in body[:-1]:
        if not x.endswith(","):
            fail("json: a line is not one event and a comma: " + x[:80])
        json.loads(x[:-1])
    events = json.loads(text)
    names, slices, threads, used = [], {}, set(), set()
    flows_s, flows_f, instants = {}, {}, []
    for e in events:
        ph = e.get("ph")
        if ph == "M":
            if e["name"] == "thread_name":
                threads.add(e["tid"])
            continue
        names.append(e.get("name", ""))
        if ph == "i":
            instants.append(e.get("name", ""))
        used.add(e["tid"])
        if ph == "X":
            t0 = ns(e["ts"])
            slices.setdefault(e["tid"], []).append(
                (t0, t0 + ns(e["dur"]), e["name"]))
        elif ph == "s":
            if e["id"] in flows_s:
                fail("json: flow id %s starts twice" % e["id"])
            flows_s[e["id"]] = e
            names.append("flow:" + e.get("name", ""))
        elif ph == "f":
            if e["id"] in flows_f:
                fail("json: flow id %s ends twice" % e["id"])
            flows_f[e["id"]] = e
    check_slices(slices, "json")
    if set(flows_s) != set(flows_f):
        fail("json: flow ends do not match: %d starts, %d ends"
             % (len(flows_s), len(flows_f)))
    for fl in list(flows_s.values()) + list(flows_f.values()):
        if not inside(slices, fl["tid"], ns(fl["ts"])):
            fail("json: flow %s not inside a slice of its track" % fl["id"])
    for tid in used:
        if tid != 0 and tid not in threads:
            fail("json: track %s has no thread_name" % tid)
    if events[-1].get("name") != "trace end":
        fail("json: the last event is not 'trace end'")
    check_wants(names, wants, instants)
    print("# json ok: %d events, %d slices, %d flows"
          % (len(events), sum(len(v) for v in slices.values()), len(flows_s)))


def varint(b, i):
    v, s = 0, 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return v, i


def fields(b):
    """Decode one message: a list of (field, wire, value)."""
    i, out = 0, []
    while i < len(b):
        key, i = varint(b, i)
        f, w = key >> 3, key & 7
        if w == 0:
            v, i = varint(b, i)
        elif w == 1:
            v = int.from_bytes(b[i:i + 8], "little")
            i += 8
        elif w == 2:
            n, i = varint(b, i)
            v = b[i:i + n]
            if len(v) != n:
                fail("proto: a field runs past its message")
            i += n
        elif w == 5:
            v = int.from_bytes(b[i:i + 4], "little")
            i += 4
        else:
            fail("proto: wire type %d" % w)
        out.append((f, w, v))
    return out


def check_proto(path, wants):
    with open(path, "rb") as f:
        data = f.read()
    tracks, events = {}, []
    for f, w, pk in fields(data):
        if f != 1 or w != 2:
            fail("proto: a Trace field other than packet: %d" % f)
        pf = fields(pk)
        ts = [v for (n, _, v) in pf if n == 8]
        for n, wt, v in pf:
            if n == 60:
                td = {k: x for (k, _, x) in fields(v)}
                name = td.get(2, b"").decode()
                if 3 in td:
                    pd = {k: x for (k, _, x) in fields(td[3])}
                    name = pd.get(6, b"").decode() or name
                if 4 in td:
                    th = {k: x for (k, _, x) in fields(td[4])}
                    name = th.get(5, b"").decode() or name
                tracks[td[1]] = name
            elif n == 11:
                ev = {"flow": [], "end": [], "name": "", "cat": []}
                for k, kw, x in fields(v):
                    if k == 22:
                        ev["cat"].append(x.decode())
                    elif k == 9:
                        ev["type"] = x
                    elif k == 11:
                        ev["track"] = x
                    elif k == 23:
                        ev["name"] = x.decode()
                    elif k == 47:
                        if kw != 1:
                            fail("proto: flow_ids not fixed64")
                        ev["flow"].append(x)
                    elif k == 48:
                        if kw != 1:
                            fail("proto: terminating_flow_ids not fixed64")
                        ev["end"].append(x)
                if not ts:
                    fail("proto: a track event without a timestamp")
                ev["ts"] = ts[0]
                events.append(ev)
    slices, open_, names, instants = {}, {}, [], []
    starts, ends = {}, {}
    for ev in events:
        tr = ev.get("track")
        if tr not in tracks:
            fail("proto: event on an undescribed track %s" % tr)
        if ev.get("type") == 1:
            if tr in open_:
                fail("proto: slice begins inside another on track %s" % tr)
            open_[tr] = (ev["ts"], ev["name"])
            names.append(ev["name"])
        elif ev.get("type") == 2:
            if tr not in open_:
                fail("proto: slice end without a begin on track %s" % tr)
            t0, name = open_.pop(tr)
            slices.setdefault(tr, []).append((t0, ev["ts"], name))
        else:
            names.append(ev["name"])
            if ev.get("type") == 3 and "flow" not in ev["cat"]:
                instants.append(ev["name"])
        for fid in ev["flow"]:
            if fid in starts:
                fail("proto: flow %d starts twice" % fid)
            starts[fid] = ev
            names.append("flow:" + ev["name"])
        for fid in ev["end"]:
            ends[fid] = ev
    if open_:
        fail("proto: slices left open: %r" % open_)
    check_slices(slices, "proto")
    if set(starts) != set(ends):
        fail("proto: flows without both ends: %d starts, %d ends"
             % (len(starts), len(ends)))
    for ev in list(starts.values()) + list(ends.values()):
        if not inside(slices, ev["track"], ev["ts"]):
            fail("proto: flow event not inside a slice of its track")
    for uuid, name in tracks.items():
        if not name:
            fail("proto: track %d has no name" % uuid)
    check_wants(names, wants, instants)
    print("# proto ok: %d events, %d slices, %d flows"
          % (len(events), sum(len(v) for v in slices.values()), len(starts)))


def main():
    if len(sys.argv) < 3:
        fail("usage: check_trace.py json|proto FILE [want ...]")
    if sys.argv[1] == "json":
        check_json(sys.argv[2], sys.argv[3:])
    else:
        check_proto(sys.argv[2], sys.argv[3:])


main()
