#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""ctypes_client.py PLUGIN - a Python client of libsmarm with no C glue
and no copied declaration: the smarm module (smarm.py, generated from
the headers; on PYTHONPATH) opens libsmarm.so.0 (smarm.load(): here
through SMARM_LIBRARY) with every prototype set, and gives the
constants and smarm_value_t. It opens a plugin (the out-of-tree
"adder" of tests/install), builds a supervisor spec of one adder
server, runs the node on a Python thread with the library's own
smarm_sup_run as the root actor's body (so no Python runs on an actor
stack), and calls the server by name from the main thread: 1000 calls
with smarm_value_t arguments, a cast, and the reply checked each time.
Then it stops and closes the node. Prints "python client: ok" and exits
0; any failed step is named and exits 1.

smarm_sup_run(const smarm_sup_spec_t *) is called through the root's
smarm_actor_cb type, void (*)(void *): the same one-pointer argument in
the same register on every supported ABI, its int result ignored.
"""
import ctypes
import sys
import threading
import time

import smarm

if len(sys.argv) != 2:
    print("usage: ctypes_client.py PLUGIN", file=sys.stderr)
    sys.exit(2)

S = 1000000000
c_p = ctypes.c_void_p
lib = smarm.load()


def fail(what):
    print("python client: " + what, file=sys.stderr)
    sys.exit(1)


def must(rc, what):
    try:
        smarm.check(rc, what)
    except smarm.SmarmError as e:
        fail(str(e))


pl, b, spec, node, s = c_p(), c_p(), c_p(), c_p(), c_p()
msg = ctypes.create_string_buffer(256)
rc = lib.smarm_plugin_open(sys.argv[1].encode(), ctypes.byref(pl), msg,
                           len(msg))
if rc != 0:
    fail("plugin: %s" % msg.value.decode())
must(lib.smarm_plugin_behaviour(pl, b"adder", ctypes.byref(b)), "behaviour")
must(lib.smarm_sup_spec_alloc(ctypes.byref(spec)), "spec")
must(lib.smarm_sup_spec_add_server(spec, b"adder", b, b"start=1",
                                   b"pyadder", smarm.SMARM_SUP_PERMANENT,
                                   smarm.SMARM_SUP_SHUTDOWN_DEFAULT, 5 * S),
     "add_server")
must(lib.smarm_node_open(ctypes.byref(node), None), "node_open")

root = ctypes.cast(lib.smarm_sup_run, c_p)  # see the docstring
result = {}


def run():
    # ctypes drops the GIL for the call: the node runs beside Python.
    result["rc"] = lib.smarm_node_run(node, root, spec, None, None)


t = threading.Thread(target=run)
t.start()

must(lib.smarm_server_open_name(node, b, b"pyadder", ctypes.byref(s)),
     "open_name")
reply = smarm.smarm_value_t()
for tries in range(500):  # until the server has registered its name
    rc = lib.smarm_server_call(s, b"get", None, 0, ctypes.byref(reply), S)
    if rc != smarm.SMARM_ENONAME:
        break
    time.sleep(0.01)
must(rc, "first call")
if reply.type != smarm.SMARM_T_I64 or reply.v.i != 1:
    fail("get after start=1 gave type %d value %d" % (reply.type,
                                                       reply.v.i))
arg = smarm.smarm_value_t()
arg.type = smarm.SMARM_T_I64
for i in range(1, 1001):
    arg.v.i = i
    must(lib.smarm_server_call(s, b"add", ctypes.byref(arg), 1,
                               ctypes.byref(reply), 5 * S), "add")
    if reply.v.i != 1 + i * (i + 1) // 2:
        fail("add %d gave %d" % (i, reply.v.i))
must(lib.smarm_server_cast(s, b"reset", None, 0), "cast reset")
arg.v.i = 3
must(lib.smarm_server_call(s, b"add", ctypes.byref(arg), 1,
                           ctypes.byref(reply), 5 * S), "add after reset")
if reply.v.i != 3:
    fail("add after reset gave %d" % reply.v.i)
# A variadic call: the extra arguments as ctypes values of the
# operation's C types (add: int64_t in, int64_t out).
out = ctypes.c_int64()
must(lib.smarm_server_callv(s, b"add", 5 * S, ctypes.byref(out),
                            ctypes.c_int64(4)), "callv add")
if out.value != 7:
    fail("callv add 4 gave %d" % out.value)
# A wrong argument count is the call's error, named by the module.
rc = lib.smarm_server_call(s, b"add", None, 0, ctypes.byref(reply), 5 * S)
if rc != smarm.SMARM_EARGS or smarm.err_name(rc) != "SMARM_EARGS":
    fail("add without its argument gave %s" % smarm.err_name(rc))
lib.smarm_server_free(s)
must(lib.smarm_node_stop(node), "node_stop")
t.join()
must(result.get("rc", -1), "node_run")
must(lib.smarm_node_close(node), "node_close")
lib.smarm_sup_spec_free(spec)
must(lib.smarm_plugin_close(pl), "plugin_close")
print("python client: ok")
