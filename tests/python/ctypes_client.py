#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""ctypes_client.py LIBSMARM PLUGIN - a Python client of libsmarm with no
C glue: ctypes loads the installed libsmarm.so.0, opens a plugin (the
out-of-tree "adder" of tests/install), builds a supervisor spec of one
adder server, runs the node on a Python thread with the library's own
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

if len(sys.argv) != 3:
    print("usage: ctypes_client.py LIBSMARM PLUGIN", file=sys.stderr)
    sys.exit(2)

lib = ctypes.CDLL(sys.argv[1])
c_p = ctypes.c_void_p

SMARM_T_I64 = 4
SMARM_SUP_PERMANENT = 0
S = 1000000000


class ValueU(ctypes.Union):
    _fields_ = [("i", ctypes.c_int64), ("u", ctypes.c_uint64),
                ("f32", ctypes.c_float), ("f64", ctypes.c_double),
                ("b", ctypes.c_bool), ("pid", ctypes.c_uint64),
                ("p", c_p)]


class Value(ctypes.Structure):  # smarm_value_t
    _fields_ = [("type", ctypes.c_int), ("len", ctypes.c_uint32),
                ("v", ValueU)]


def proto(name, res, *args):
    f = getattr(lib, name)
    f.restype = res
    f.argtypes = list(args)
    return f


err_name = proto("smarm_err_name", ctypes.c_char_p, ctypes.c_int)
plugin_open = proto("smarm_plugin_open", ctypes.c_int, ctypes.c_char_p,
                    ctypes.POINTER(c_p), ctypes.c_char_p, ctypes.c_size_t)
plugin_behaviour = proto("smarm_plugin_behaviour", ctypes.c_int, c_p,
                         ctypes.c_char_p, ctypes.POINTER(c_p))
plugin_close = proto("smarm_plugin_close", ctypes.c_int, c_p)
spec_alloc = proto("smarm_sup_spec_alloc", ctypes.c_int, ctypes.POINTER(c_p))
spec_free = proto("smarm_sup_spec_free", None, c_p)
add_server = proto("smarm_sup_spec_add_server", ctypes.c_int, c_p,
                   ctypes.c_char_p, c_p, ctypes.c_char_p, ctypes.c_char_p,
                   ctypes.c_int, ctypes.c_uint64, ctypes.c_uint64)
node_open = proto("smarm_node_open", ctypes.c_int, ctypes.POINTER(c_p), c_p)
node_run = proto("smarm_node_run", ctypes.c_int, c_p, c_p, c_p, c_p, c_p)
node_stop = proto("smarm_node_stop", ctypes.c_int, c_p)
node_close = proto("smarm_node_close", ctypes.c_int, c_p)
open_name = proto("smarm_server_open_name", ctypes.c_int, c_p, c_p,
                  ctypes.c_char_p, ctypes.POINTER(c_p))
server_free = proto("smarm_server_free", None, c_p)
call = proto("smarm_server_call", ctypes.c_int, c_p, ctypes.c_char_p,
             ctypes.POINTER(Value), ctypes.c_size_t, ctypes.POINTER(Value),
             ctypes.c_uint64)
cast = proto("smarm_server_cast", ctypes.c_int, c_p, ctypes.c_char_p,
             ctypes.POINTER(Value), ctypes.c_size_t)


def must(rc, what):
    if rc != 0:
        print("python client: %s: %s" % (what, err_name(rc).decode()),
              file=sys.stderr)
        sys.exit(1)


pl, b, spec, node, s = c_p(), c_p(), c_p(), c_p(), c_p()
msg = ctypes.create_string_buffer(256)
rc = plugin_open(sys.argv[2].encode(), ctypes.byref(pl), msg, len(msg))
if rc != 0:
    print("python client: plugin: %s" % msg.value.decode(), file=sys.stderr)
    sys.exit(1)
must(plugin_behaviour(pl, b"adder", ctypes.byref(b)), "behaviour")
must(spec_alloc(ctypes.byref(spec)), "spec")
must(add_server(spec, b"adder", b, b"start=1", b"pyadder",
                SMARM_SUP_PERMANENT, 5 * S, 5 * S), "add_server")
must(node_open(ctypes.byref(node), None), "node_open")

root = ctypes.cast(lib.smarm_sup_run, c_p)  # see the docstring
result = {}


def run():
    # ctypes drops the GIL for the call: the node runs beside Python.
    result["rc"] = node_run(node, root, spec, None, None)


t = threading.Thread(target=run)
t.start()

must(open_name(node, b, b"pyadder", ctypes.byref(s)), "open_name")
reply = Value()
for tries in range(500):  # until the server has registered its name
    rc = call(s, b"get", None, 0, ctypes.byref(reply), S)
    if rc == 0:
        break
    time.sleep(0.01)
must(rc, "first call")
if reply.type != SMARM_T_I64 or reply.v.i != 1:
    print("python client: get after start=1 gave %d" % reply.v.i,
          file=sys.stderr)
    sys.exit(1)
arg = Value()
arg.type = SMARM_T_I64
for i in range(1, 1001):
    arg.v.i = i
    must(call(s, b"add", ctypes.byref(arg), 1, ctypes.byref(reply), 5 * S),
         "add")
    if reply.v.i != 1 + i * (i + 1) // 2:
        print("python client: add %d gave %d" % (i, reply.v.i),
              file=sys.stderr)
        sys.exit(1)
must(cast(s, b"reset", None, 0), "cast reset")
arg.v.i = 3
must(call(s, b"add", ctypes.byref(arg), 1, ctypes.byref(reply), 5 * S),
     "add after reset")
if reply.v.i != 3:
    print("python client: add after reset gave %d" % reply.v.i,
          file=sys.stderr)
    sys.exit(1)
server_free(s)
must(node_stop(node), "node_stop")
t.join()
must(result.get("rc", -1), "node_run")
must(node_close(node), "node_close")
spec_free(spec)
must(plugin_close(pl), "plugin_close")
print("python client: ok")
