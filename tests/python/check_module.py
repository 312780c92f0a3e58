#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_module.py MODULE_DIR CHECK_EXE HEADER... - the generated ctypes
module smarm.py (in MODULE_DIR) against the C headers it came from.

CHECK_EXE is smarm_py_check, the C program tools/gen-smarm-py.py writes
beside the module and the build compiles against the same headers: it
has already checked at compile time that every function's type is the
one parsed, and it prints what the compiler says of every constant
(value), struct (size, alignment), field (offset, size, type) and
function (return and parameter types). Each must match the module:

  - the same constants with the same values;
  - each struct's ctypes class has the C size and alignment, and the
    same fields, at the same offsets, of the same sizes and types;
  - each function's restype and argtypes have the C types' sizes,
    kinds (integer, float, pointer, struct; the sign of an integer)
    and, for a POINTER() or an array, those of what they point to.

A type is written as the program prints it: "[size class sign ...]"
with class GCC's __builtin_classify_type (1 integer, 5 pointer, 8
float, 12 struct, 13 union; 14 stands for an array), sign 1 for a
signed integer, 0 for an unsigned one, -1 for anything else (and char,
whose sign ctypes does not show), then the element of an array or
the target of a POINTER(), or the struct's name.

Then, so that nothing the generator missed goes unnoticed, the headers
are scanned with plain patterns, independent of the generator: every
SMARM_API function, every enum member and X-macro entry, every SMARM_*
macro with a value and every struct with a body must be in the module
or in its _SKIPPED list. Prints each mismatch; exit status 1 if any.
"""
import ctypes
import re
import subprocess
import sys

if len(sys.argv) < 4:
    print("usage: check_module.py MODULE_DIR CHECK_EXE HEADER...",
          file=sys.stderr)
    sys.exit(2)
sys.path.insert(0, sys.argv[1])
import smarm  # noqa: E402

errors = []


def bad(msg):
    errors.append(msg)


def describe(ct):
    """A ctypes type as smarm_py_check prints a C type."""
    if ct is None:
        return "void"
    size = ctypes.sizeof(ct)
    if issubclass(ct, ctypes.Array):
        return "%d 14 -1 %s" % (size, describe(ct._type_))
    if issubclass(ct, ctypes._Pointer):
        return "%d 5 -1 %s" % (size, describe(ct._type_))
    if issubclass(ct, ctypes.Structure):
        return "%d 12 -1 %s" % (size, ct.__name__)
    if issubclass(ct, ctypes.Union):
        return "%d 13 -1 %s" % (size, ct.__name__)
    code = ct._type_
    if code in ("P", "z"):              # c_void_p, c_char_p
        return "%d 5 -1" % size
    if code in ("f", "d"):
        return "%d 8 -1" % size
    if code == "c":
        return "%d 1 -1" % size
    if code == "?":
        return "%d 1 0" % size
    if code in "bhilq":
        return "%d 1 1" % size
    if code in "BHILQ":
        return "%d 1 0" % size
    raise ValueError("no description for %r" % ct)


def types_of(line):
    return re.findall(r"\[([^\]]*)\]", line)


out = subprocess.run([sys.argv[2]], check=True, capture_output=True,
                     text=True).stdout

# ------------------------------------------------ what the compiler says
consts = {}
structs = {}
fields = {}
funcs = {}
for line in out.splitlines():
    w = line.split()
    if w[0] == "const":
        consts[w[1]] = int(w[3]) if w[2] == "int" else \
            line.split(" ", 3)[3]
    elif w[0] == "struct":
        structs[w[1]] = (int(w[3]), int(w[5]))
    elif w[0] == "field":
        fields[w[1]] = (int(w[3]), int(w[5]), types_of(line))
    elif w[0] == "func":
        funcs[w[1]] = types_of(line)
    else:
        bad("smarm_py_check printed %r" % line)

# ----------------------------------------------------------- constants
module_consts = {k: v for k, v in vars(smarm).items()
                 if re.fullmatch(r"SMARM_[A-Z0-9_]+", k)}
for name in sorted(set(consts) | set(module_consts)):
    if name not in module_consts:
        bad("constant %s: in the headers, not in the module" % name)
    elif name not in consts:
        bad("constant %s: in the module, not in the headers" % name)
    elif consts[name] != module_consts[name]:
        bad("constant %s: %r in the headers, %r in the module" %
            (name, consts[name], module_consts[name]))

# ------------------------------------------------------------- structs
records = {k: v for k, v in vars(smarm).items() if isinstance(v, type) and
           issubclass(v, (ctypes.Structure, ctypes.Union))}
inline = set()


def walk(cls, prefix, path):
    """Compare the fields of cls (the struct's at path) with the C's."""
    names = [f[0] for f in cls._fields_]
    c_names = [k[len(path):] for k in fields if k.startswith(path) and
               "." not in k[len(path):]]
    if sorted(names) != sorted(c_names):
        bad("%s: fields %s in the module, %s in the headers" %
            (path[:-1], names, c_names))
    for fname, ftype in cls._fields_:
        key = path + fname
        if key not in fields:
            continue
        off, size, desc = fields[key]
        f = getattr(cls, fname)
        if prefix + f.offset != off or f.size != size:
            bad("%s: offset %d size %d in the module, %d %d in C" %
                (key, prefix + f.offset, f.size, off, size))
        if desc:
            if describe(ftype) != desc[0]:
                bad("%s: [%s] in the module, [%s] in C" %
                    (key, describe(ftype), desc[0]))
        else:  # an inline union or struct
            inline.add(ftype.__name__)
            walk(ftype, prefix + f.offset, key + ".")


for name in sorted(set(structs) | set(records)):
    if name not in structs:
        continue  # inline ones are checked through their parent
    if name not in records:
        bad("struct %s: in the headers, not in the module" % name)
        continue
    cls = records[name]
    size, align = structs[name]
    if ctypes.sizeof(cls) != size or ctypes.alignment(cls) != align:
        bad("struct %s: size %d align %d in the module, %d %d in C" %
            (name, ctypes.sizeof(cls), ctypes.alignment(cls), size, align))
    walk(cls, 0, name + ".")
for name in sorted(set(records) - set(structs) - inline):
    bad("class %s: in the module, no struct of the headers" % name)

# ----------------------------------------------------------- functions
protos = smarm._PROTOTYPES
for name in sorted(set(funcs) | set(protos)):
    if name not in protos:
        bad("function %s: in the headers, not in the module" % name)
        continue
    if name not in funcs:
        bad("function %s: in the module, not in the headers" % name)
        continue
    restype, argtypes, _ = protos[name]
    mine = [describe(restype)] + [describe(a) for a in argtypes]
    if mine != funcs[name]:
        bad("function %s: %s in the module, %s in C" %
            (name, mine, funcs[name]))

# ----------------------------------- an independent scan of the headers
known = set(module_consts) | set(records) | set(protos) | \
    set(smarm._SKIPPED)
for path in sys.argv[3:]:
    with open(path, encoding="utf-8") as f:
        text = re.sub(r"/\*.*?\*/", " ", f.read(), flags=re.S)
    text = text.replace("\\\n", " ")
    found = set()
    found |= set(re.findall(r"SMARM_API\s[^;(]*?\b(smarm_\w+)\s*\(", text))
    found |= set(re.findall(r"^\s*(SMARM_[A-Z0-9_]+)\s*=", text, re.M))
    found |= {m for m in re.findall(r"#define\s+(SMARM_[A-Z0-9_]+)[ \t]+\S",
                                    text) if not m.startswith("SMARM__")}
    found |= set(re.findall(r"typedef\s+(?:struct|union)\s*\w*\s*\{[^;]*?"
                            r"(?:\{[^}]*\}[^;]*?)*\}\s*(\w+)\s*;", text))
    for name in sorted(found - known):
        bad("%s (%s): in the header, not in the module" % (name, path))
    for mname, body in re.findall(r"#define\s+(SMARM_\w+_MAP)\(XX\)(.*?)\n",
                                  text):
        for entry, value in re.findall(r"XX\((\w+),\s*(-?\d+)", body):
            if not any(k.endswith("_" + entry) and v == int(value)
                       for k, v in module_consts.items()):
                bad("%s entry %s = %s: not in the module" %
                    (mname, entry, value))

for e in errors:
    print("check_module: " + e)
print("check_module: %d constants, %d structs, %d fields, %d functions: %s"
      % (len(consts), len(structs), len(fields), len(funcs),
         "%d mismatches" % len(errors) if errors else "all match"))
sys.exit(1 if errors else 0)
