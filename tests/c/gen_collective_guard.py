#!/usr/bin/env python3
"""Generate the one-rank-differs guard (tests/c/collective_guard.c's body) from include/parlops.h.

For every function the header marks [collective], each argument in turn is changed on one rank
only -- a different value, zero, a negative or huge value, NaN, NULL, another live handle of the same
type (on the same communicator), a destroyed handle, a callback that fails -- and, for numbers, on
every rank at once (extreme values: hypre's options, sizes, tolerances); then the valid call again
with every shell callback failing on one rank. Every rank must return the same status within the
watchdog's time, and the process must not crash. Then the lifetime cases: each handle passed to
the call (element 0 of a handle array) is destroyed from the first shell callback the call runs,
and the destroy must be refused (PARLOPS_ERR_BUSY) with the call going on to the valid call's
status, on every rank: a function that runs callbacks cannot be added without entering it (objects
held by reference, and the other callbacks, are tests/c/lifetime.c's). The valid arguments come from one hand-written
recipe per function (tests/c/collective_recipes.h); a collective function without a recipe, or a
recipe for a function that is not collective, stops the generation with an error, so a new
collective function cannot be added without entering this test.

What is not varied, and why (the header's conventions say so):
  - the first handle argument of a call (it names the communicator the call runs on: a rank
    without it cannot take part) is not made NULL or stale, only replaced by another live handle;
  - communicator arguments (another parlops_comm is another MPI context: like MPI itself, ranks
    passing different communicators cannot meet), MPI_Comm/MPI_Fint, and opaque `void *` contexts;
  - array lengths beyond what the recipe's arrays hold (a caller's array must be as long as its
    count says: no library can check that);
  - struct fields tagged `extremes` only get the values that must be refused (a valid value of
    hypre's print level prints).

Usage: gen_collective_guard.py include/parlops.h tests/c/collective_recipes.h > collective_guard.c
"""
import re
import sys

HANDLES = ("comm", "layout", "vec", "op", "solver", "hypre_options", "options", "prox")


def parse_header(text):
    ints = set(re.findall(r"typedef int32_t (parlops_[a-z0-9_]+);", text))
    fns = set(re.findall(r"typedef [a-z ]+\(\*(parlops_[a-z0-9_]+_fn)\)", text))
    structs = {}
    for body, name in re.findall(r"typedef struct \{(.*?)\} (parlops_[a-z0-9_]+);", text, re.S):
        fields = re.findall(r"^\s*([a-z0-9_]+) ([a-z0-9_]+);", body, re.M)
        structs[name] = fields
    decls = re.findall(r"((?://[^\n]*\n)+)([a-z_ ]+?\**)\s*(parlops_[a-z0-9_]+)\(([^;]*?)\);", text)
    coll = []
    for com, _ret, name, params in decls:
        if "[collective" not in com:
            continue
        ps = []
        for p in " ".join(params.split()).split(","):
            p = p.strip()
            m = re.match(r"(.*?)([a-z_][a-z0-9_]*)$", p)
            ps.append((m.group(1).strip(), m.group(2)))
        coll.append((name, ps))
    return ints, fns, structs, coll


def parse_recipes(text):
    out = {}
    found = re.findall(r'RECIPE\((parlops_[a-z0-9_]+),\s*"([^"]*)"\)', text)
    # recipes made by a macro: NAME_RECIPE(parlops_x) expands RECIPE(parlops_x, "tags") in the macro
    for macro, meta in re.findall(r'#define ([A-Z_]+_RECIPE)\(fn\)[^\n]*\n\s*RECIPE\(fn,\s*"([^"]*)"\)', text):
        found += [(n, meta) for n in re.findall(macro + r'\((parlops_[a-z0-9_]+)\)', text)]
    for name, meta in found:
        tags = {}
        for item in meta.split():
            param, _, kind = item.partition(":")
            tags.setdefault(kind, set()).add(param)
        out[name] = tags
    return out


def classify(ctype, ints, fns, structs):
    t = ctype.replace(" ", "")
    if t in ("MPI_Comm", "MPI_Fint"):
        return "skip", None
    for h in HANDLES:
        if re.fullmatch(r"(const)?parlops_%s\*(const)?\*" % h, t) and "const*" in t:
            return "handle_array", h
        if t == "parlops_%s**" % h:
            return "handle_out", h
        if re.fullmatch(r"(const)?parlops_%s\*" % h, t):
            return "handle", h
    if t in ("void*",):
        return "void_mut", None
    if t == "constchar*":
        return "text", None
    if t == "constvoid*":
        return "void_in", None
    if t.startswith("const") and t.endswith("*") and t[5:-1] in structs:
        return "struct", t[5:-1]
    if t in ("double*", "int64_t*", "size_t*", "parlops_scalar*", "char*"):
        return "out_ptr", None
    if t in ("constdouble*", "constint64_t*", "constint*", "constbool*"):
        return "in_array", t[5:-1]
    if t == "double":
        return "double", None
    if t == "bool":
        return "bool", None
    if t == "uint64_t":
        return "u64", None
    if t == "size_t":
        return "size", None
    if t == "parlops_scalar":
        return "scalar", None
    if t in ("int", "int32_t") or t in ints:
        return "int", "int"
    if t == "int64_t":
        return "int", "int64_t"
    if t in fns:
        return "callback", t
    raise SystemExit(f"gen_collective_guard.py: no rule for the parameter type '{ctype}'")


def variants(kind, sub, name, tags, first_handle, structs):
    """(label, C statement mutating `a.<name>`, also-on-all-ranks) for one parameter."""
    a = f"a.{name}"
    v = []
    if name in tags.get("skip", ()):
        return v
    if kind == "handle":
        if sub == "comm":
            return v
        if name != first_handle:
            v += [("NULL", f"{a} = NULL;", False), ("destroyed", f"{a} = dead_{sub};", False),
                  ("a handle of another type", f"{a} = (void *)wrong_type_{sub}();", False)]
        # (through void *: a handle the function changes is not const)
        v += [("another live handle, same shape", f"{a} = (void *)alt_same_{sub}({a});", False),
              ("another live handle, other shape", f"{a} = (void *)alt_other_{sub}({a});", False)]
    elif kind == "handle_array":
        v += [("NULL array", f"{a} = NULL;", False),
              ("element 0 NULL", f"{a} = arr_patch((void *const *){a}, NULL);", False),
              ("element 0 destroyed", f"{a} = arr_patch((void *const *){a}, (void *)dead_{sub});", False),
              ("element 0 another handle, same shape",
               f"{a} = arr_patch((void *const *){a}, (void *)alt_same_{sub}({a} ? {a}[0] : NULL));", False),
              ("element 0 another handle, other shape",
               f"{a} = arr_patch((void *const *){a}, (void *)alt_other_{sub}({a} ? {a}[0] : NULL));", False)]
    elif kind in ("handle_out", "out_ptr", "void_mut"):
        if name not in tags.get("keepnull", ()):
            v += [("NULL", f"{a} = NULL;", False)]
    elif kind == "void_in":
        v += [("NULL", f"{a} = NULL;", False)]
        if name in tags.get("f64", ()):
            v += [("element 0 + 1", f"{a} = f64_patch({a}, 1.0);", False),
                  ("element 0 NaN", f"{a} = f64_patch({a}, NAN);", False)]
        if name in tags.get("idx", ()):
            v += [("index 0 + 1", f"{a} = idx_patch({a}, 1);", False),
                  ("index 0 = -1", f"{a} = idx_set({a}, -1);", False)]
    elif kind == "text":
        v += [("NULL", f"{a} = NULL;", False), ("another text", f'{a} = "zz_";', False),
              ("not UTF-8", f'{a} = "\\xff";', False)]
    elif kind == "in_array":
        v += [("NULL", f"{a} = NULL;", False)]
        if sub == "double":
            v += [("element 0 + 1", f"{a} = dbl_patch({a}, 1.0);", True),
                  ("element 0 NaN", f"{a} = dbl_patch({a}, NAN);", True)]
        elif sub == "int":
            v += [("element 0 + 1", f"{a} = int_patch({a}, 1);", True),
                  ("element 0 = -1", f"{a} = int_set({a}, -1);", True),
                  ("element 0 huge", f"{a} = int_set({a}, INT_MAX);", True)]
        elif sub == "bool":
            v += [("element 0 negated", f"{a} = bool_flip({a});", True)]
        else:
            v += [("element 0 + 1", f"{a} = i64_patch({a}, 1);", True),
                  ("element 0 = -1", f"{a} = i64_set({a}, -1);", True),
                  ("element 0 huge", f"{a} = i64_set({a}, INT64_MAX / 2);", True)]
    elif kind == "struct":
        v += [("NULL", f"{a} = NULL;", False)]
        for ftype, fname in structs[sub]:
            if fname in tags.get("skip", ()):
                continue
            quiet = fname in tags.get("extremes", ())
            if ftype == "double":
                vals = [("+ 1", "+= 1.0"), ("NaN", "= NAN"), ("-1", "= -1.0"), ("2", "= 2.0")]
            else:
                vals = [("+ 1", "+= 1"), ("0", "= 0"), ("-2", "= -2"), ("INT_MAX", "= INT_MAX"),
                        ("INT_MIN", "= INT_MIN")]
            if quiet:
                # a field whose valid values have side effects (hypre's print level prints): only
                # the values that must be refused
                vals = [(label, op) for label, op in vals if label not in ("+ 1", "0", "2")]
            for label, op in vals:
                stmt = f"{{ static {sub} c_; c_ = *{a}; c_.{fname} {op}; {a} = &c_; }}"
                v.append((f".{fname} {label}", stmt, True))
    elif kind == "double":
        v += [("+ 1", f"{a} += 1.0;", True), ("NaN", f"{a} = NAN;", True), ("-1", f"{a} = -1.0;", True),
              ("0", f"{a} = 0.0;", True), ("Inf", f"{a} = INFINITY;", True)]
    elif kind == "bool":
        v += [("negated", f"{a} = !{a};", True)]
    elif kind == "u64":
        v += [("+ 1", f"{a} += 1;", True)]
    elif kind == "size":
        v += [("+ 1", f"{a} += 1;", True), ("0", f"{a} = 0;", True)]
    elif kind == "scalar":
        v += [("re + 1", f"{a}.re += 1.0;", True), ("im = 1", f"{a}.im = 1.0;", True),
              ("re NaN", f"{a}.re = NAN;", True)]
    elif kind == "int":
        big = "INT64_MAX" if sub == "int64_t" else "INT_MAX"
        v += [("+ 1", f"{a} += 1;", True), ("0", f"{a} = 0;", True), ("-1", f"{a} = -1;", True)]
        if name not in tags.get("count", ()) and name not in tags.get("long", ()):
            v += [("huge", f"{a} = {big};", True), ("most negative", f"{a} = {big.replace('MAX', 'MIN')};", True)]
    elif kind == "callback":
        v += [("NULL", f"{a} = NULL;", False)]
        if sub == "parlops_apply_fn":
            v += [("a callback that fails", f"{a} = cb_fail;", False)]
        elif sub == "parlops_diagonal_fn":
            v += [("a callback that fails", f"{a} = cb_diag_fail;", False)]
        elif sub == "parlops_prox_fn":
            v += [("a callback that fails", f"{a} = cb_prox_fail;", False)]
    return v


def main():
    header, recipes = sys.argv[1], sys.argv[2]
    text = open(header).read()
    ints, fns, structs, coll = parse_header(text)
    rec = parse_recipes(open(recipes).read())
    names = {n for n, _ in coll}
    missing = sorted(names - set(rec))
    extra = sorted(set(rec) - names)
    if missing or extra:
        if missing:
            print(f"gen_collective_guard.py: collective functions without a recipe in {recipes}: "
                  f"{' '.join(missing)}", file=sys.stderr)
        if extra:
            print(f"gen_collective_guard.py: recipes for functions the header does not mark [collective]: "
                  f"{' '.join(extra)}", file=sys.stderr)
        sys.exit(1)
    out = []
    w = out.append
    w("/* GENERATED by tests/c/gen_collective_guard.py from include/parlops.h and")
    w(" * tests/c/collective_recipes.h: do not edit. */")
    w('#include "collective_world.h"')
    for name, ps in coll:
        w(f"struct A_{name} {{")
        for ctype, pname in ps:
            w(f"  {ctype} {pname};")
        w("};")
    w('#include "collective_recipes.h"')
    runners = []
    for name, ps in coll:
        tags = rec[name]
        first_handle = next((pn for ct, pn in ps if classify(ct, ints, fns, structs)[0] == "handle"), None)
        call = f"{name}({', '.join('a.' + pn for _, pn in ps)})"
        outs = [(pn, classify(ct, ints, fns, structs)[1]) for ct, pn in ps
                if classify(ct, ints, fns, structs)[0] == "handle_out"]
        cleanup = " ".join(f"if (st == PARLOPS_OK && a.{pn} && *a.{pn}) parlops_{h}_destroy(a.{pn});"
                           for pn, h in outs)
        w(f"static void run_{name}(void) {{")
        w(f"  struct A_{name} a;")
        w("  parlops_status st;")
        # the valid call first: it must succeed on every rank (the recipe is right)
        w(f"  begin(\"{name}\", \"(valid call)\", \"\", -1); memset(&a, 0, sizeof a); recipe_{name}(&a);")
        must = 0 if "expect" in tags.get("any", ()) else 1
        w(f"  st = {call}; expect_same(st, {must}); {cleanup} finish_case();")
        idx = 0
        for ctype, pname in ps:
            kind, sub = classify(ctype, ints, fns, structs)
            for label, stmt, all_ranks in variants(kind, sub, pname, tags, first_handle, structs):
                for mode in (("one",) + (("all",) if all_ranks else ())):
                    idx += 1
                    victim = "-2" if mode == "all" else f"{idx} % size_"
                    w(f"  begin(\"{name}\", \"{pname}\", \"{label}\", {victim});")
                    w(f"  memset(&a, 0, sizeof a); recipe_{name}(&a);")
                    w(f"  if (mutated()) {{ {stmt} }}")
                    w(f"  st = {call}; expect_same(st, 0); {cleanup} finish_case();")
        # every shell callback failing on one rank, the arguments valid
        idx += 1
        w(f"  begin(\"{name}\", \"(callbacks)\", \"shell callbacks fail on one rank\", {idx} % size_);")
        w(f"  memset(&a, 0, sizeof a); recipe_{name}(&a); fail_rank = victim_;")
        w(f"  st = {call}; fail_rank = -1; expect_same(st, 0); {cleanup} finish_case();")
        # the lifetime cases: each handle passed (element 0 of an array, when the count reads it),
        # destroyed from the first shell callback the call runs: refused, the call unchanged
        counts = sorted(tags.get("count", ()))
        passed_handles = [(ct, pn) for ct, pn in ps
                          if classify(ct, ints, fns, structs)[0] in ("handle", "handle_array")
                          and classify(ct, ints, fns, structs)[1] != "comm" and pn not in tags.get("skip", ())]
        # the recipe's CSR matrix W.A becomes the shell W.S of the same shape, so that an apply
        # reaches a callback (the valid status is taken with the same arguments)
        subst = " ".join(f"a.{pn} = lt_sub_op(a.{pn});" for ct, pn in ps
                         if classify(ct, ints, fns, structs) == ("handle", "op"))
        if passed_handles:
            w(f"  memset(&a, 0, sizeof a); recipe_{name}(&a); {subst} parlops_status valid = {call}; {cleanup}")
        for ctype, pname in passed_handles:
            kind, sub = classify(ctype, ints, fns, structs)
            k = HANDLES.index(sub)
            w(f"  begin(\"{name}\", \"{pname}\", \"destroyed from a callback\", -1);")
            w(f"  memset(&a, 0, sizeof a); recipe_{name}(&a); {subst}")
            if kind == "handle":
                w(f"  lt_arm({k}, a.{pname});")
            else:
                # the count before the array in the parameter list says how many elements it reads
                before = [pn for ct, pn in ps[:[pn for _, pn in ps].index(pname)] if pn in counts]
                cond = f"a.{before[-1]} > 0 && " if before else ""
                w(f"  lt_arm({k}, {cond}a.{pname} ? (const void *)a.{pname}[0] : NULL);")
            w(f"  st = {call}; expect_lifetime(st, valid); {cleanup} finish_case();")
        w("}")
        runners.append(name)
    w("static void (*const runners[])(void) = {" + ", ".join(f"run_{n}" for n in runners) + "};")
    w("static const char *const runner_names[] = {" + ", ".join(f'"{n}"' for n in runners) + "};")
    w('#include "collective_main.h"')
    print("\n".join(out))


if __name__ == "__main__":
    main()
