#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gen-smarm-py.py - generate the ctypes module smarm.py from the public
headers, and a C program that checks it against them.

  gen-smarm-py.py --template python/smarm.py.in --libdir DIR \\
      --out smarm.py --check-c smarm_py_check.c HEADER...

The headers (abi/smarm/*.h, those that include others after them) are
read as a C compiler sees them in a C11 translation unit: lines spliced,
comments dropped, `#ifdef __cplusplus` blocks left out, macros expanded
where a value needs them (the X-macro lists SMARM_ERROR_MAP, ... included).
From them come:

  - constants: every member of an enum, and every object-like
    SMARM_* macro whose value is an integer or a string, with its value;
  - structs: every `typedef struct { ... } name;` with its fields, as a
    ctypes.Structure (an anonymous union member as a ctypes.Union),
    except the plugin descriptors (SKIPPED);
  - functions: every SMARM_API declaration, with its ctypes restype and
    argtypes (pointers to opaque objects and callbacks as c_void_p).

The module is the template with @GENERATED@ replaced by those and
@LIBDIR@ by the installed library directory. The C program, compiled
against the same headers, checks at compile time that each function's
type is the one parsed, and prints what the compiler says of each
constant, struct, field and parameter type; tests/python/check_module.py
compares that with the module. Anything in the headers this script does
not understand stops it with an error naming it, so the module never
silently lags the headers.
"""
import argparse
import re
import sys

# Names in the headers that are not in the module, and why.
SKIPPED = {
    "SMARM_API": "the export attribute, not a value",
    "SMARM_PID_NONE": "the zero pid: smarm_pid_t() in Python",
    "SMARM_TIMER_NONE": "the zero timer: smarm_timer_t() in Python",
    "SMARM_SITE_NONE": "no site: smarm_site_t() in Python",
    "smarm_handler_t": "plugin side: a handler table entry",
    "smarm_gs_desc_t": "plugin side: a gen_server descriptor",
    "smarm_sm_row_t": "plugin side: a gen_statem table row",
    "smarm_sm_desc_t": "plugin side: a gen_statem descriptor",
    "smarm_plugin_desc_t": "plugin side: a plugin descriptor",
}

# C scalar types and their ctypes names. ctypes has no intptr_t: on
# every supported ABI it is ssize_t's size and sign (the check says so).
SCALARS = {
    "char": "ctypes.c_char",
    "signed char": "ctypes.c_byte",
    "unsigned char": "ctypes.c_ubyte",
    "short": "ctypes.c_short",
    "unsigned short": "ctypes.c_ushort",
    "int": "ctypes.c_int",
    "unsigned": "ctypes.c_uint",
    "long": "ctypes.c_long",
    "unsigned long": "ctypes.c_ulong",
    "long long": "ctypes.c_longlong",
    "unsigned long long": "ctypes.c_ulonglong",
    "bool": "ctypes.c_bool",
    "float": "ctypes.c_float",
    "double": "ctypes.c_double",
    "int8_t": "ctypes.c_int8",
    "int16_t": "ctypes.c_int16",
    "int32_t": "ctypes.c_int32",
    "int64_t": "ctypes.c_int64",
    "uint8_t": "ctypes.c_uint8",
    "uint16_t": "ctypes.c_uint16",
    "uint32_t": "ctypes.c_uint32",
    "uint64_t": "ctypes.c_uint64",
    "size_t": "ctypes.c_size_t",
    "ptrdiff_t": "ctypes.c_ssize_t",
    "intptr_t": "ctypes.c_ssize_t",
    "uintptr_t": "ctypes.c_size_t",
}
# Integer types of <stdint.h>/<stddef.h> a constant's cast may name:
# (bits, signed).
INT_TYPES = {
    "int": (32, True), "unsigned": (32, False), "long": (64, True),
    "int8_t": (8, True), "int16_t": (16, True), "int32_t": (32, True),
    "int64_t": (64, True), "uint8_t": (8, False), "uint16_t": (16, False),
    "uint32_t": (32, False), "uint64_t": (64, False), "size_t": (64, False),
    "intptr_t": (64, True), "uintptr_t": (64, False),
}
LIMITS = {
    "INT8_MAX": 2**7 - 1, "INT16_MAX": 2**15 - 1, "INT32_MAX": 2**31 - 1,
    "INT64_MAX": 2**63 - 1, "UINT8_MAX": 2**8 - 1, "UINT16_MAX": 2**16 - 1,
    "UINT32_MAX": 2**32 - 1, "UINT64_MAX": 2**64 - 1, "INT_MAX": 2**31 - 1,
    "SIZE_MAX": 2**64 - 1, "INT8_MIN": -2**7, "INT16_MIN": -2**15,
    "INT32_MIN": -2**31, "INT64_MIN": -2**63,
}
BUILTIN = {"void", "char", "short", "int", "long", "signed", "unsigned",
           "float", "double", "bool", "_Bool"}


class HeaderError(Exception):
    pass


# ------------------------------------------------------------- tokens

TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<str>"(?:\\.|[^"\\])*")
  | (?P<chr>'(?:\\.|[^'\\])*')
  | (?P<num>\.?\d(?:[\w.]|[eEpP][+-])*)
  | (?P<id>[A-Za-z_]\w*)
  | (?P<punct>\.\.\.|<<=|>>=|->|\#\#|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^~!<>=?:;,.()\[\]{}\#])
""", re.X)


class Tok:
    __slots__ = ("kind", "text")

    def __init__(self, kind, text):
        self.kind = kind
        self.text = text

    def __repr__(self):
        return self.text


def tokenize(text):
    toks = []
    pos = 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m:
            raise HeaderError("cannot read %r" % text[pos:pos + 30])
        pos = m.end()
        if m.lastgroup != "ws":
            toks.append(Tok(m.lastgroup, m.group()))
    return toks


def untok(toks):
    return " ".join(t.text for t in toks)


def strip_comments(text):
    """Comments become one space; strings and character constants stay."""
    pat = re.compile(r'("(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\')'
                     r'|/\*.*?\*/|//[^\n]*', re.S)
    return pat.sub(lambda m: m.group(1) if m.group(1) else " ", text)


# ------------------------------------------------------------- macros

class Macro:
    def __init__(self, name, params, body):
        self.name = name
        self.params = params  # None: object-like
        self.body = body      # tokens


def collect_args(toks, i):
    """toks[i] follows '('; returns ([arg tokens...], index after ')')."""
    args = [[]]
    depth = 0
    while i < len(toks):
        t = toks[i]
        if t.text == "(":
            depth += 1
        elif t.text == ")":
            if depth == 0:
                return args, i + 1
            depth -= 1
        elif t.text == "," and depth == 0:
            args.append([])
            i += 1
            continue
        args[-1].append(t)
        i += 1
    raise HeaderError("unbalanced macro arguments: " + untok(toks))


def expand(toks, macros, hide=frozenset()):
    """Expand the macros in toks (C's rules, as far as the headers use
    them: arguments pre-expanded unless next to # or ##, # stringifies,
    ## pastes, a macro never expands inside itself)."""
    out = []
    i = 0
    while i < len(toks):
        t = toks[i]
        m = macros.get(t.text) if t.kind == "id" else None
        if m is None or t.text in hide:
            out.append(t)
            i += 1
            continue
        if m.params is None:
            out += expand(m.body, macros, hide | {m.name})
            i += 1
            continue
        if i + 1 >= len(toks) or toks[i + 1].text != "(":
            out.append(t)
            i += 1
            continue
        args, i = collect_args(toks, i + 2)
        if m.params == [] and args == [[]]:
            args = []
        if len(args) != len(m.params):
            raise HeaderError("%s takes %d arguments, given %d" %
                              (m.name, len(m.params), len(args)))
        body = substitute(m, dict(zip(m.params, args)), macros, hide)
        out += expand(body, macros, hide | {m.name})
    return out


def substitute(m, args, macros, hide):
    body = m.body
    res = []
    i = 0
    while i < len(body):
        t = body[i]
        if t.text == "#" and i + 1 < len(body) and body[i + 1].text in args:
            s = untok(args[body[i + 1].text]).replace("\\", "\\\\")
            res.append(Tok("str", '"%s"' % s.replace('"', '\\"')))
            i += 2
            continue
        if t.kind == "id" and t.text in args:
            pasted = ((i > 0 and body[i - 1].text == "##") or
                      (i + 1 < len(body) and body[i + 1].text == "##"))
            arg = args[t.text]
            res += arg if pasted else expand(arg, macros, hide)
            i += 1
            continue
        res.append(t)
        i += 1
    # Token pasting.
    out = []
    i = 0
    while i < len(res):
        if res[i].text == "##" and out and i + 1 < len(res):
            out[-1:] = tokenize(out[-1].text + res[i + 1].text)
            i += 2
            continue
        out.append(res[i])
        i += 1
    return out


# ---------------------------------------------------------- evaluation

class Eval:
    """Integer and string constant expressions, after macro expansion:
    literals, names of known constants, casts to integer types, unary
    + - ~ !, binary * / % + - << >> & ^ | and parentheses; adjacent
    string literals concatenate."""

    BINARY = {"*": 10, "/": 10, "%": 10, "+": 9, "-": 9, "<<": 8, ">>": 8,
              "&": 6, "^": 5, "|": 4}

    def __init__(self, toks, names, what):
        self.toks = toks
        self.i = 0
        self.names = names
        self.what = what

    def fail(self, why):
        raise HeaderError("%s: %s in '%s'" % (self.what, why,
                                               untok(self.toks)))

    def peek(self):
        return self.toks[self.i].text if self.i < len(self.toks) else None

    def value(self):
        if self.toks and all(t.kind == "str" for t in self.toks):
            return "".join(eval_c_string(t.text) for t in self.toks)
        v = self.expr(0)
        if self.i != len(self.toks):
            self.fail("trailing tokens")
        return v

    def expr(self, prec):
        v = self.unary()
        while self.peek() in self.BINARY and self.BINARY[self.peek()] > prec:
            op = self.peek()
            self.i += 1
            w = self.expr(self.BINARY[op])
            if op == "*":
                v *= w
            elif op == "/":
                v = int(v / w)
            elif op == "%":
                v = v - w * int(v / w)
            elif op == "+":
                v += w
            elif op == "-":
                v -= w
            elif op == "<<":
                v <<= w
            elif op == ">>":
                v >>= w
            elif op == "&":
                v &= w
            elif op == "^":
                v ^= w
            else:
                v |= w
        return v

    def unary(self):
        t = self.peek()
        if t is None:
            self.fail("missing operand")
        tok = self.toks[self.i]
        self.i += 1
        if t in ("-", "+", "~", "!"):
            v = self.unary()
            return {"-": -v, "+": v, "~": ~v, "!": int(not v)}[t]
        if t == "(":
            if self.peek() in INT_TYPES and self.i + 1 < len(self.toks) \
                    and self.toks[self.i + 1].text == ")":
                bits, signed = INT_TYPES[self.peek()]
                self.i += 2
                v = self.unary() & (2**bits - 1)
                return v - 2**bits if signed and v >= 2**(bits - 1) else v
            v = self.expr(0)
            if self.peek() != ")":
                self.fail("missing ')'")
            self.i += 1
            return v
        if tok.kind == "num":
            m = re.fullmatch(r"(0[xX][0-9a-fA-F]+|\d+)[uUlL]*", t)
            if not m:
                self.fail("not an integer literal: " + t)
            s = m.group(1)
            return int(s, 16) if s[:2] in ("0x", "0X") else \
                int(s, 8) if len(s) > 1 and s[0] == "0" else int(s)
        if tok.kind == "id":
            if t in self.names:
                v = self.names[t]
                if isinstance(v, int):
                    return v
            if t in LIMITS:
                return LIMITS[t]
            self.fail("unknown name " + t)
        self.fail("unexpected '%s'" % t)


def eval_c_string(lit):
    body = lit[1:-1]
    return re.sub(r'\\(.)', lambda m: {"n": "\n", "t": "\t"}.get(
        m.group(1), m.group(1)), body)


# ------------------------------------------------------------- types
#
# A parsed C type is one of:
#   ("name", text, const)   a scalar, typedef or struct/union/enum name
#   ("ptr", T, const)       pointer to T (const: the pointer itself)
#   ("array", T, n, ntext)  array of n T
#   ("func", R, [T...], variadic)
#   ("record", "struct"|"union", [(name, T)...])  an inline body


def c_text(t, inner=""):
    """The C spelling of type t around the declarator text inner."""
    k = t[0]
    if k == "name":
        return ("const " if t[2] else "") + t[1] + \
            (" " + inner if inner else "")
    if k == "ptr":
        star = "*" + (" const" if t[2] else "") + \
            (" " + inner if inner and t[2] else inner)
        if t[1][0] in ("array", "func"):
            star = "(" + star + ")"
        return c_text(t[1], star)
    if k == "array":
        return c_text(t[1], inner + "[" + t[3] + "]")
    if k == "func":
        ps = ", ".join(c_text(p) for p in t[2]) or "void"
        if t[3]:
            ps += ", ..."
        return c_text(t[1], inner + "(" + ps + ")")
    raise HeaderError("no C spelling for an inline struct")


class Parser:
    def __init__(self):
        self.macros = {}
        self.consts = {}       # name -> int | str, in header order
        self.enum_of = {}      # constant -> enum tag (or None)
        self.typedefs = {}     # name -> parsed type
        self.structs = {}      # typedef name -> (kind, body tokens)
        self.opaque = set()    # typedef names of incomplete structs
        self.funcs = []        # (name, parsed func type)
        self.errors = []       # (name, value, message) of SMARM_ERROR_MAP
        self.skipped = dict(SKIPPED)

    # --------------------------------------------------------- a header

    def read(self, path):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        text = strip_comments(text.replace("\\\n", ""))
        code = []
        active = [True]  # one entry per open conditional
        for line in text.split("\n"):
            s = line.strip()
            if not s.startswith("#"):
                if all(active):
                    code.append(line)
                continue
            d = re.match(r"#\s*(\w+)\s*(.*)$", s)
            word, rest = d.group(1), d.group(2).strip()
            if word in ("ifdef", "ifndef"):
                defined = rest in self.macros
                if rest == "__cplusplus":
                    defined = False
                active.append(defined == (word == "ifdef"))
            elif word == "if":
                active.append(self.condition(rest, path))
            elif word == "else":
                active[-1] = not active[-1]
            elif word == "endif":
                active.pop()
            elif not all(active) or word in ("include", "pragma"):
                pass
            elif word == "define":
                self.define(rest)
            elif word == "undef":
                pass  # a helper of an X-macro, used in code read later
            else:
                raise HeaderError("%s: cannot handle #%s" % (path, word))
        self.declarations(tokenize("\n".join(code)), path)
        for name, v in self.consts.items():
            if v is None:  # a macro: its value once all is known
                body = expand(self.macros[name].body, self.macros)
                self.consts[name] = Eval(body, self.consts,
                                         "#define " + name).value()

    def condition(self, expr, path):
        m = re.fullmatch(r"defined\s*\(?\s*(\w+)\s*\)?", expr)
        if not m:
            raise HeaderError("%s: cannot evaluate #if %s" % (path, expr))
        # A C11 compiler of the GNU family (GCC, Clang) reads the headers.
        return m.group(1) == "__GNUC__" or m.group(1) in self.macros

    def define(self, rest):
        m = re.match(r"(\w+)(\(([^)]*)\))?\s*(.*)$", rest, re.S)
        name, params, body = m.group(1), m.group(3), m.group(4)
        if m.group(2) is not None:
            params = [p.strip() for p in params.split(",") if p.strip()]
        self.macros[name] = Macro(name, params, tokenize(body))
        if params is not None or not name.startswith("SMARM_") or \
                name.startswith("SMARM__") or name in self.skipped or \
                not body.strip():
            return  # function-like, internal, or an include guard
        self.consts[name] = None

    # ----------------------------------------------------- declarations

    def declarations(self, toks, path):
        stmt = []
        depth = 0
        for t in toks:
            if t.text == "{":
                depth += 1
            elif t.text == "}":
                depth -= 1
            if t.text == ";" and depth == 0:
                self.statement(stmt, path)
                stmt = []
            elif t.text == "}" and depth == 0 and stmt and \
                    stmt[0].text == "static":
                stmt = []  # a header-only inline function: no symbol
            else:
                stmt.append(t)
        if stmt:
            raise HeaderError("%s: text after the last ';': %s" %
                              (path, untok(stmt)))

    def statement(self, s, path):
        first = s[0].text
        if first == "SMARM_API":
            name, t = self.declaration(s[1:])
            if t[0] != "func":
                raise HeaderError("%s: SMARM_API %s is no function" %
                                  (path, name))
            self.funcs.append((name, t))
        elif first == "enum":
            self.enum(s)
        elif first == "typedef":
            self.typedef(s[1:], path)
        elif first in ("struct", "union") and len(s) == 2:
            pass  # a forward declaration (struct sockaddr)
        else:
            raise HeaderError("%s: cannot handle '%s'" % (path, untok(s)))

    def enum(self, s):
        i = 1
        tag = None
        if s[i].kind == "id":
            tag = s[i].text
            i += 1
        if s[i].text != "{" or s[-1].text != "}":
            raise HeaderError("cannot handle " + untok(s))
        body = expand(s[i + 1:-1], self.macros)
        items = [[]]
        depth = 0
        for t in body:
            depth += t.text == "("
            depth -= t.text == ")"
            if t.text == "," and depth == 0:
                items.append([])
            else:
                items[-1].append(t)
        nxt = 0
        for item in items:
            if not item:
                continue
            name = item[0].text
            if len(item) > 1:
                if item[1].text != "=":
                    raise HeaderError("enum %s: cannot read %s" %
                                      (tag, untok(item)))
                nxt = Eval(item[2:], self.consts, name).value()
            self.consts[name] = nxt
            self.enum_of[name] = tag
            nxt += 1
        # The error list's messages, for SmarmError (a map entry is
        # XX(name, value, message)).
        if "SMARM_ERROR_MAP" in untok(s) and not self.errors:
            m = self.macros["SMARM_ERROR_MAP"]
            xx = m.params[0]
            b = m.body
            for j, t in enumerate(b):
                if t.text == xx and j + 1 < len(b) and b[j + 1].text == "(":
                    a, _ = collect_args(b, j + 2)
                    self.errors.append((
                        "SMARM_" + a[0][0].text,
                        Eval(a[1], self.consts, "error").value(),
                        Eval(a[2], self.consts, "error").value()))

    def typedef(self, s, path):
        if s[0].text in ("struct", "union") and len(s) == 3:
            self.opaque.add(s[2].text)          # typedef struct x x_t
            self.typedefs[s[2].text] = ("name", s[2].text, False)
            return
        if s[0].text in ("struct", "union") and \
                any(t.text == "{" for t in s[:3]):
            close = max(j for j, t in enumerate(s) if t.text == "}")
            name = s[-1].text
            if close != len(s) - 2:
                raise HeaderError("%s: cannot handle typedef %s" %
                                  (path, untok(s)))
            open_ = next(j for j, t in enumerate(s) if t.text == "{")
            self.structs[name] = (s[0].text, s[open_ + 1:close])
            self.typedefs[name] = ("name", name, False)
            return
        name, t = self.declaration(s)
        self.typedefs[name] = t

    # -------------------------------------------------------- declarators

    def base(self, s):
        """The type specifiers at the start of s: (type, index after).
        A typedef name is a type only where no type word came before it
        (`smarm_pid_t pid`, `unsigned flags`)."""
        words = []
        const = False
        i = 0
        while i < len(s):
            w = s[i].text
            if w in ("const", "volatile"):
                const |= w == "const"
            elif w in ("struct", "union", "enum") and not words:
                words += [w, s[i + 1].text]
                i += 1
            elif w in BUILTIN and all(x in BUILTIN for x in words):
                words.append(w)
            elif (w in SCALARS or w in self.typedefs) and not words:
                words.append(w)
            else:
                break
            i += 1
        if not words:
            raise HeaderError("no type in " + untok(s))
        if len(words) > 1 and "int" in words:
            words.remove("int")
        text = " ".join(w for w in words if w != "signed" or
                        words == ["signed", "char"])
        text = {"": "int", "_Bool": "bool"}.get(text, text)
        return ("name", text, const), i

    def declaration(self, s):
        t, i = self.base(s)
        return self.declarator(s[i:], t)

    def declarator(self, s, t):
        """Apply the declarator s to the type t: (name or None, type)."""
        i = 0
        while i < len(s) and s[i].text in ("*", "const"):
            if s[i].text == "*":
                t = ("ptr", t, False)
            else:
                t = ("ptr", t[1], True)
            i += 1
        inner = None
        name = None
        if i < len(s) and s[i].text == "(" and i + 1 < len(s) and \
                s[i + 1].text in ("*", "("):
            close = self.match(s, i)
            inner = s[i + 1:close]
            i = close + 1
        elif i < len(s) and s[i].kind == "id":
            name = s[i].text
            i += 1
        suffixes = []
        while i < len(s):
            if s[i].text == "[":
                close = self.match(s, i)
                ntoks = s[i + 1:close]
                n = Eval(expand(ntoks, self.macros), self.consts,
                         "array size").value()
                suffixes.append(("array", n, untok(ntoks)))
                i = close + 1
            elif s[i].text == "(":
                close = self.match(s, i)
                suffixes.append(("func", self.params(s[i + 1:close])))
                i = close + 1
            elif s[i].text == "__attribute__" and i + 1 < len(s) and \
                    s[i + 1].text == "(":
                i = self.match(s, i + 1) + 1  # format(printf...): no type
            else:
                raise HeaderError("cannot read declarator " + untok(s))
        for suf in reversed(suffixes):
            if suf[0] == "array":
                t = ("array", t, suf[1], suf[2])
            else:
                t = ("func", t, suf[1][0], suf[1][1])
        if inner is not None:
            return self.declarator(inner, t)
        return name, t

    def params(self, s):
        if untok(s) in ("", "void"):
            return [], False
        parts = [[]]
        depth = 0
        for t in s:
            depth += t.text in "(["
            depth -= t.text in ")]"
            if t.text == "," and depth == 0:
                parts.append([])
            else:
                parts[-1].append(t)
        variadic = untok(parts[-1]) == "..."
        if variadic:
            parts.pop()
        return [self.declaration(p)[1] for p in parts], variadic

    @staticmethod
    def match(s, i):
        pair = {"(": ")", "[": "]", "{": "}"}[s[i].text]
        depth = 0
        for j in range(i, len(s)):
            depth += s[j].text == s[i].text
            depth -= s[j].text == pair
            if depth == 0:
                return j
        raise HeaderError("unbalanced " + untok(s))

    def fields(self, toks):
        """The members of a struct or union body: [(name, type)]."""
        out = []
        stmt = []
        depth = 0
        for t in toks:
            depth += t.text == "{"
            depth -= t.text == "}"
            if t.text == ";" and depth == 0:
                if stmt[0].text in ("struct", "union") and \
                        stmt[1].text == "{":
                    close = self.match(stmt, 1)
                    rec = ("record", stmt[0].text,
                           self.fields(stmt[2:close]))
                    out.append(self.declarator(stmt[close + 1:], rec))
                else:
                    out.append(self.declaration(stmt))
                stmt = []
            else:
                stmt.append(t)
        return out


# ---------------------------------------------------------- the module

class Module:
    def __init__(self, p):
        self.p = p
        self.classes = []   # (python name, kind, fields, top) in order
        self.emitted = set()  # C typedef names with a class
        for name, (kind, body) in p.structs.items():
            if name in p.skipped:
                continue
            self.record(name, kind, p.fields(body), True)

    def record(self, pyname, kind, fields, top):
        """A class for a struct or union; an inline one (top False) is
        named after its parent and member (smarm_value_t_v)."""
        out = []
        for fname, t in fields:
            if t[0] == "record":
                self.record(pyname + "_" + fname, t[1], t[2], False)
                out.append((fname, pyname + "_" + fname, t))
            else:
                out.append((fname, self.ctype(t, "field"), t))
        self.classes.append((pyname, kind, out, top))
        if top:
            self.emitted.add(pyname)

    def ctype(self, t, where):
        """The ctypes spelling of t (where: field, arg or ret)."""
        k = t[0]
        if k == "name":
            if t[1] == "void" and where == "ret":
                return "None"
            if t[1] in SCALARS:
                return SCALARS[t[1]]
            if t[1].startswith("enum "):
                return "ctypes.c_int"
            if t[1] in self.emitted:
                return t[1]
            td = self.p.typedefs.get(t[1])
            if td and td[0] != "name":
                return self.ctype(td, where)
            raise HeaderError("no ctypes type for %s (%s)" % (t[1], where))
        if k == "ptr":
            to = t[1]
            if to[0] == "name" and to[1] == "char":
                return "ctypes.c_char_p"
            if self.is_opaque(to):
                return "ctypes.c_void_p"
            return "ctypes.POINTER(%s)" % self.ctype(to, "field")
        if k == "array":
            return "(%s * %d)" % (self.ctype(t[1], "field"), t[2])
        if k == "func":
            raise HeaderError("a function type by value (%s)" % where)
        raise HeaderError("cannot map " + repr(t))

    def is_opaque(self, t):
        """A pointer to t is a c_void_p: void, an incomplete or skipped
        struct, a function, a struct of no header (struct sockaddr)."""
        if t[0] == "func":
            return True
        if t[0] != "name":
            return False
        name = t[1]
        if name == "void" or name in self.p.opaque or \
                name in self.p.skipped or name.startswith("struct "):
            return True
        td = self.p.typedefs.get(name)
        return bool(td and td[0] == "ptr" and td[1][0] == "func")

    # ------------------------------------------------------------ text

    def python(self):
        p = self.p
        out = ["# Constants: every enum member and integer or string",
               "# SMARM_* macro of the headers, with its value."]
        for name, v in p.consts.items():
            out.append("%s = %r" % (name, v))
        out += ["", "# The status codes: value -> (name, message).",
                "_ERRORS = {"]
        for name, v, msg in p.errors:
            out.append("    %d: (%r, %r)," % (v, name, msg))
        out += ["}", ""]
        for pyname, kind, fields, _ in self.classes:
            base = "Union" if kind == "union" else "Structure"
            out.append("class %s(ctypes.%s):" % (pyname, base))
            out.append("    _fields_ = [")
            for fname, ct, _ in fields:
                out.append("        (%r, %s)," % (fname, ct))
            out += ["    ]", "", ""]
        out.append("# Functions: name -> (restype, argtypes, variadic).")
        out.append("_PROTOTYPES = {")
        for name, t in p.funcs:
            args = ", ".join(self.ctype(a, "arg") for a in t[2])
            out.append("    %r: (%s, [%s], %s)," % (
                name, self.ctype(t[1], "ret"), args, t[3]))
        out += ["}", "", "# In the headers, not here, and why.",
                "_SKIPPED = {"]
        for name, why in sorted(p.skipped.items()):
            out.append("    %r: %r," % (name, why))
        out.append("}")
        return "\n".join(out)

    def check_c(self):
        """A C program printing what the compiler says of everything the
        module holds, for tests/python/check_module.py."""
        p = self.p
        out = ["/* SPDX-License-Identifier: MIT */",
               "/* Generated by tools/gen-smarm-py.py: what the compiler",
               " * says of the ctypes module's constants, structs and",
               " * functions (read by tests/python/check_module.py). */",
               "#include <smarm/smarm.h>",
               "#include <smarm/otp.h>",
               "#include <smarm/obs.h>",
               "#include <smarm/smarm_plugin.h>",
               "#include <stdalign.h>",
               "#include <stddef.h>",
               "#include <stdint.h>",
               "#include <stdio.h>",
               "",
               "/* A constant's value: its sign from its own type. */",
               "#define K(n) \\",
               "\tprintf(\"const %s int %s%ju\\n\", #n, (n) < 1 && (n) != 0 "
               "? \"-\" : \"\", \\",
               "\t       (n) < 1 && (n) != 0 ? -(uintmax_t)(n) : "
               "(uintmax_t)(n))",
               "",
               "int main(void)",
               "{"]
        for name, v in p.consts.items():
            if isinstance(v, str):
                out.append('\tprintf("const %%s str %%s\\n", "%s", %s);'
                           % (name, name))
            else:
                out.append("\tK(%s);" % name)
        for pyname, kind, fields, top in self.classes:
            if not top:
                continue  # an inline union, reached through its parent
            out.append('\tprintf("struct %s size %%zu align %%zu\\n", '
                       'sizeof(%s), alignof(%s));' % (pyname, pyname,
                                                      pyname))
            self.check_fields(out, pyname, pyname, "", fields)
        for name, t in p.funcs:
            out.append("\t_Static_assert(__builtin_types_compatible_p("
                       "__typeof__(&%s), %s), \"%s\");" %
                       (name, c_text(("ptr", t, False)), name))
            parts = [self.describe(t[1], self.ctype(t[1], "ret"))]
            for a in t[2]:
                parts.append(self.describe(a, self.ctype(a, "arg")))
            fmt, args = self.fmt(parts)
            out.append('\tprintf("func %s%s\\n"%s);' %
                       (name, fmt, "".join(", " + a for a in args)))
        out += ["\treturn 0;", "}", ""]
        return "\n".join(out)

    def check_fields(self, out, struct, cname, path, fields):
        for fname, ct, t in fields:
            fpath = path + fname
            if t[0] == "record":
                sub = next(c for c in self.classes if c[0] == ct)
                out.append('\tprintf("field %s.%s offset %%zu size %%zu\\n", '
                           'offsetof(%s, %s), sizeof(((%s *)0)->%s));' %
                           (struct, fpath, cname, fpath, cname, fpath))
                self.check_fields(out, struct, cname, fpath + ".", sub[2])
                continue
            fmt, args = self.fmt([self.describe(t, ct)])
            out.append('\tprintf("field %s.%s offset %%zu size %%zu%s\\n", '
                       'offsetof(%s, %s), sizeof(((%s *)0)->%s)%s);' %
                       (struct, fpath, fmt, cname, fpath, cname, fpath,
                        "".join(", " + a for a in args)))

    @staticmethod
    def fmt(parts):
        fmt = ""
        args = []
        for f, a in parts:
            fmt += " [" + f + "]"
            args += a
        return fmt, args

    def describe(self, t, ct):
        """(format, args): how the compiler sees type t, mapped to ct:
        size, class (__builtin_classify_type; 14 for an array) and sign
        (-1: not an integer, or char, whose sign ctypes does not show),
        then the element of an array and the target of a POINTER()."""
        if ct == "None":
            return "void", []
        text = c_text(t)
        size = "sizeof(%s)" % text
        if t[0] == "array":
            # GCC classes an array as the pointer it decays to: 14 is
            # ours, the size and the element say the rest.
            f, a = self.describe(t[1], ct[1:ct.rindex(" * ")])
            return "%%zu 14 -1 %s" % f, [size] + a
        cls = "__builtin_classify_type(*(%s)0)" % c_text(("ptr", t, False))
        integer = ct in SCALARS.values() and ct not in (
            "ctypes.c_char", "ctypes.c_float", "ctypes.c_double")
        sign = "(int)((%s)-1 < (%s)1)" % (text, text) if integer else "-1"
        f = "%zu %d %d"
        a = [size, cls, sign]
        if ct.startswith("ctypes.POINTER("):
            sub_f, sub_a = self.describe(t[1], ct[len("ctypes.POINTER("):-1])
            f += " " + sub_f
            a += sub_a
        elif t[0] == "name" and ct in self.emitted:
            f += " %s" % t[1]
        return f, a


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--template", required=True)
    ap.add_argument("--libdir", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--check-c", required=True)
    ap.add_argument("headers", nargs="+")
    a = ap.parse_args()
    p = Parser()
    try:
        for h in a.headers:
            p.read(h)
        m = Module(p)
        module_text = m.python()
        check_text = m.check_c()
    except HeaderError as e:
        sys.exit("gen-smarm-py.py: %s" % e)
    with open(a.template, encoding="utf-8") as f:
        tpl = f.read()
    if tpl.count("@GENERATED@") != 1 or "@LIBDIR@" not in tpl:
        sys.exit("gen-smarm-py.py: %s lacks @GENERATED@ or @LIBDIR@" %
                 a.template)
    text = tpl.replace("@GENERATED@", module_text).replace(
        "@LIBDIR@", a.libdir)
    with open(a.out, "w", encoding="utf-8") as f:
        f.write(text)
    with open(a.check_c, "w", encoding="utf-8") as f:
        f.write(check_text)


if __name__ == "__main__":
    main()
