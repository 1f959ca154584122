#!/usr/bin/env python3
"""make docs: the API reference, in HTML, from the comments of include/parlops.h.

One page per group (the library and its errors, communicators, layouts, vectors, operators,
preconditioners, solvers, run-time options, eigensolvers, device), each function, type and constant
with its comment, its C declaration, and its C++, Fortran and Python names where those layers have
one (read from include/parlops.hpp, fortran/parlops.f90 and python/parlops/); the guides (docs/*.md,
the READMEs) and the examples beside them. Fails on an item without a comment, an item the groups
do not place, a name outside parlops_/PARLOPS_, and any link (to a page, an anchor, a guide or an
example) that does not resolve.
Usage: gen_docs.py OUT_DIR"""
import html
import os
import re
import shutil
import sys

OUT = sys.argv[1]
HEADER = open("include/parlops.h").read()
errors = []

# ---- the header's items, each with the comment right above it
Item = dict  # name, kind, decl, doc, group


def comment_above(lines, i):
    """The comment block ending right above line i (// lines, or one /* */ block), '' if none."""
    j = i - 1
    out = []
    if j >= 0 and lines[j].rstrip().endswith("*/"):
        while j >= 0:
            out.insert(0, lines[j])
            if lines[j].lstrip().startswith("/*"):
                break
            j -= 1
        text = "\n".join(out)
        return re.sub(r"^\s*/\*|\*/\s*$", "", text, flags=re.M).strip()
    while j >= 0 and lines[j].lstrip().startswith("//"):
        out.insert(0, lines[j].lstrip()[2:].strip())
        j -= 1
    return " ".join(out).strip()


def parse():
    lines = HEADER.split("\n")
    items = []
    i = 0
    in_enum = None
    while i < len(lines):
        ln = lines[i]
        m = re.match(r"#define (PARLOPS_\w+|[A-Z_]+)(\(\))?\s", ln + " ")
        if m and m.group(1) != "PARLOPS_H":
            doc = comment_above(lines, i)
            k = i
            while not doc and k > 0 and lines[k - 1].startswith("#define"):  # a group of defines
                k -= 1
                doc = comment_above(lines, k)
            if not doc and k > 0 and lines[k - 1].startswith("#ifdef"):
                doc = comment_above(lines, k - 1)
            name = m.group(1)
            if not any(x["name"] == name for x in items):
                items.append(Item(name=name, kind="macro" if m.group(2) or "(" in ln.split()[1] else "constant",
                                  decl=ln.strip(), doc=doc))
        elif ln.startswith("typedef enum {"):
            in_enum = (i, [])
        elif in_enum is not None:
            mm = re.match(r"\s+(PARLOPS_\w+) = (-?\d+),", ln)
            if mm:
                in_enum[1].append(Item(name=mm.group(1), kind="enumerator", decl=f"{mm.group(1)} = {mm.group(2)}",
                                       doc=comment_above(lines, i)))
            me = re.match(r"\} (\w+);", ln)
            if me:
                start = in_enum[0]
                items.append(Item(name=me.group(1), kind="enum", decl="\n".join(lines[start:i + 1]),
                                  doc=comment_above(lines, start)))
                for e in in_enum[1]:
                    e["enum"] = me.group(1)
                    items.append(e)
                in_enum = None
        elif ln.startswith("typedef struct {"):
            j = i
            while not lines[j].startswith("}"):
                j += 1
            name = re.match(r"\} (\w+);", lines[j]).group(1)
            items.append(Item(name=name, kind="struct", decl="\n".join(lines[i:j + 1]), doc=comment_above(lines, i)))
            i = j
        elif ln.startswith("typedef "):
            j = i
            while not lines[j].rstrip().endswith(";"):
                j += 1
            decl = " ".join(x.strip() for x in lines[i:j + 1])
            mm = re.search(r"\(\*(\w+)\)", decl) or re.search(r"(\w+);$", decl)
            kind = "callback" if "(*" in decl else "opaque handle" if decl.startswith("typedef struct") else "type"
            items.append(Item(name=mm.group(1), kind=kind, decl=decl, doc=comment_above(lines, i)))
            i = j
        else:
            mf = re.match(r"^([A-Za-z_][\w \*]*?[\s\*])(parlops_\w+)\(", ln)
            if mf and 'extern "C"' in "\n".join(lines[:i]):
                j = i
                while not lines[j].rstrip().endswith(";"):
                    j += 1
                items.append(Item(name=mf.group(2), kind="function", decl="\n".join(lines[i:j + 1]),
                                  doc=comment_above(lines, i)))
                i = j
        i += 1
    return items


ITEMS = parse()
NAMES = {it["name"] for it in ITEMS}
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from header_parse import functions  # noqa: E402
_missed = set(functions(HEADER)) - {it["name"] for it in ITEMS if it["kind"] == "function"}
if _missed:
    errors.append(f"functions the reference's reader missed: {sorted(_missed)}")

# ---- groups: pages, and the rules that place each item (first match wins)
PAGES = [
    ("library", "The library and its errors", "Start-up, version, configuration report, status codes and messages."),
    ("comm", "Communicators", "parlops communicators over MPI communicators, rank groups."),
    ("layout", "Layouts", "How a vector's entries are split over the ranks."),
    ("vector", "Vectors", "Distributed vectors: creation, wrapping caller arrays, arithmetic, reductions."),
    ("operator", "Operators", "Linear operators: matrices, stencils, callbacks, compositions, blocks."),
    ("precond", "Preconditioners", "Jacobi, Chebyshev, block Jacobi, BoomerAMG, AMS and ADS; set-ups and refreshes."),
    ("solver", "Solvers", "Krylov solvers: settings, monitors, outcomes, views and timings."),
    ("options", "Run-time options", "PETSc-style options from strings, the environment and argv."),
    ("proximal", "Proximal operators and solvers", "L1, L2, L2,1 and the caller's own; primal-dual and proximal gradient (PyLops-MPI's proximal module)."),
    ("eigen", "Eigensolvers", "Krylov-Schur, Lanczos, randomized eigensolvers, power iteration, low-rank operators."),
    ("device", "Device", "CUDA memory, streams and NCCL communicators."),
]
RULES = [
    (r"^parlops_(prox|primal_dual|proximal_gradient|admm_l2)|^PARLOPS_ACCELERATION_", "proximal"),
    (r"nccl|_set_stream$|_to_memory$|^parlops_vec_memory$|_copy_(to|from)_host$|^PARLOPS_MEMORY_|^parlops_memory$", "device"),
    (r"^parlops_(status|last_error|version|check_version|init|finalize|config_report)|^parlops_status$|^PARLOPS_(OK|ERR_|VERSION_|CHECK_VERSION)", "library"),
    (r"^parlops_options|^parlops_solver_set_from_options$", "options"),
    (r"^parlops_(eig_|op_power_iteration|op_low_rank)|^PARLOPS_(EIG_|RANDOMIZED_)|^parlops_(eig_which|randomized_pass)$", "eigen"),
    (r"^parlops_(op_create_(boomeramg|ams|ads|block_jacobi|chebyshev)|amg_options|hypre_options|rigid_body_modes|op_refresh|op_setup_count)"
     r"|^PARLOPS_(HYPRE_|LOCAL_|DOF_)|^parlops_(amg_options|hypre_solver|local_solve|dof_ordering)$", "precond"),
    (r"^parlops_(solver|op_create_inverse)|^parlops_(reason|method|norm_type|reference|pc_side|orthog|sum_order|threshold|"
     r"monitor_fn|monitor_iterate_fn|monitor_action|solve_info|log_phase)$"
     r"|^PARLOPS_(METHOD_|NORM_TYPE_|REFERENCE_|PC_|ORTHOG_|SUM_|MONITOR_|LOG_|THRESHOLD_|CONVERGED_|DIVERGED_|ITERATING)", "solver"),
    (r"^parlops_comm_|^parlops_comm$|^parlops_vec_(dot|norm)_groups$", "comm"),
    (r"^parlops_(layout|halo_block|summa_tile)|^parlops_(layout|partition)$|^PARLOPS_(PARTITION_|DECIDE|ALL_RANKS)", "layout"),
    (r"^parlops_vec|^parlops_(vec|dtype|norm|distribution|scalar)$|^PARLOPS_(F32|F64|C64|C128|RANDOM_|NORM_|REAL)", "vector"),
    (r"^parlops_op|^parlops_(op|apply_fn|destroy_fn|diagonal_fn|index|ownership|stencil)$|^PARLOPS_(INDEX_|COPY|WRAP|CENTERED|FORWARD|BACKWARD|FFT_)", "operator"),
]
for it in ITEMS:
    if not re.match(r"^(parlops_|PARLOPS_)", it["name"]):
        errors.append(f"{it['name']}: a public name outside parlops_/PARLOPS_ ({it['kind']})")
        continue
    g = next((g for rx, g in RULES if re.search(rx, it["name"])), None)
    if g is None:
        errors.append(f"{it['name']} ({it['kind']}): no group places it (tools/gen_docs.py RULES)")
    it["group"] = g
    if not it["doc"]:
        errors.append(f"{it['name']} ({it['kind']}): no comment in include/parlops.h")

# ---- the other layers' names
def cpp_names():
    out = {}
    cls = None
    fn = None
    for ln in open("include/parlops.hpp"):
        mc = re.match(r"^(class|struct) (\w+)", ln)
        if mc:
            cls = mc.group(2)
        if ln.startswith(("namespace", "}  // namespace", "};")):
            cls = None
        # a declaration starts at the class-member (2 spaces) or namespace (0) indent; bodies are deeper
        if ln.lstrip().startswith("//"):
            continue
        mo = re.match(r"^ {0,2}(?! ).*\b(operator\s*\S+?)\s*\(", ln)
        md = re.match(r"^( {0,2})(?! )(?!//|return\b|check\(|if\b|for\b|while\b|#|\})(.*?)\b(\w+)\s*\(", ln)
        if ln.rstrip().endswith(";") and "{" not in ln:
            md = mo = None  # a statement, not a declaration
        if mo:
            fn = mo.group(1).replace(" ", "")
        elif md and not md.group(3).startswith("parlops_") and md.group(3) not in ("if", "for", "while", "check"):
            before = md.group(2)
            if md.group(3) == cls or re.search(r"[\w>]\s+$|[&\*]\s*$", before):
                fn = md.group(3)
        for name in re.findall(r"\b(parlops_\w+)\b", ln):
            if fn and name in NAMES and (name.endswith("_destroy") or "(" in ln.split(name, 1)[1][:2] or "," in ln):
                label = f"parlops::{cls + '::' if cls else ''}{fn}"
                out.setdefault(name, [])
                if label not in out[name]:
                    out[name].append(label)
    return out


def fortran_names():
    text = open("fortran/parlops.f90").read()
    declared = set(re.findall(r"^\s*(?:function|subroutine) (parlops_\w+)", text, re.M | re.I))
    return {n: [x for x in (n, n + "_f") if x in declared] for n in NAMES}


def python_names():
    out = {}
    for f in sorted(os.listdir("python/parlops")):
        if not f.endswith(".py") or f.startswith("_"):
            continue
        cls, fn = None, None
        for ln in open(os.path.join("python/parlops", f)):
            if ln[:1].strip() and not ln.startswith(("def ", "class ", "@", "#", ")", "]", "}")):
                cls, fn = None, None  # a module-level statement
            mc = re.match(r"^class (\w+)", ln)
            if mc:
                cls, fn = mc.group(1), None
            mf = re.match(r"^(\s*)def (\w+)", ln)
            if mf:
                fn = mf.group(2)
                if not mf.group(1):
                    cls = None
            key = re.match(r'^\s+"(\w+)": (?:lambda|_choice)', ln)
            for name in re.findall(r'"(parlops_\w+)"', ln):
                if name not in NAMES:
                    continue
                if key:
                    label = f"parlops.Solver({key.group(1)}=...)"
                elif fn and fn.startswith("_set_"):
                    label = f"parlops.Solver({fn[5:]}=...)"
                elif fn == "__init__" and cls:
                    label = f"parlops.{cls}(...)"
                elif fn and not fn.startswith("_"):
                    label = f"parlops.{cls + '.' if cls else ''}{fn}"
                else:
                    continue
                out.setdefault(name, [])
                if label not in out[name]:
                    out[name].append(label)
    return out


CPP, FORTRAN, PY = cpp_names(), fortran_names(), python_names()

# ---- HTML
STYLE = ("body{font-family:sans-serif;max-width:60em;margin:auto;padding:1em;line-height:1.4}"
         "pre{background:#f4f4f4;padding:.6em;overflow-x:auto}code{background:#f4f4f4}"
         ".item{border-top:1px solid #ccc;margin-top:1.2em}.kind{color:#666;font-size:90%}"
         ".names{font-size:90%;color:#333}nav a{margin-right:.8em}")
page_of = {it["name"]: it["group"] for it in ITEMS if it.get("group")}


def link_names(text):
    """Backticked or bare parlops names in a comment, linked to their items."""
    def rep(m):
        n = m.group(2)
        if n in page_of:
            return f'<a href="{page_of[n]}.html#{n}"><code>{n}</code></a>'
        return f"<code>{n}</code>" if m.group(1) else n
    esc = html.escape(text, quote=False)
    return re.sub(r"(`?)\b((?:parlops|PARLOPS)_\w+)\b`?", rep, esc).replace("`", "")


def nav():
    return "<nav>" + '<a href="index.html">index</a>' + "".join(
        f'<a href="{k}.html">{html.escape(t)}</a>' for k, t, _ in PAGES) + "</nav>"


def write(path, title, body):
    with open(os.path.join(OUT, path), "w") as f:
        f.write(f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)} (parlops)</title>"
                f"<style>{STYLE}</style></head><body>{nav()}<h1>{html.escape(title)}</h1>{body}</body></html>\n")


if os.path.exists(OUT):
    shutil.rmtree(OUT)
os.makedirs(os.path.join(OUT, "guides"))
os.makedirs(os.path.join(OUT, "examples"))
guides = [("README.md", "README (build, use, test)"), ("python/README.md", "Python package")] + [
    (os.path.join("docs", f), f[:-3]) for f in sorted(os.listdir("docs")) if f.endswith(".md")]
for src, _ in guides:
    shutil.copy(src, os.path.join(OUT, "guides", src.replace("/", "_")))
examples = sorted(os.path.join("c_examples", f) for f in os.listdir("c_examples") if f.endswith((".c", ".cpp"))) + \
    sorted(os.path.join("fortran/examples", f) for f in os.listdir("fortran/examples") if f.endswith(".f90"))
for src in examples:
    shutil.copy(src, os.path.join(OUT, "examples", os.path.basename(src) + ".txt"))

counts = {}
for key, title, intro in PAGES:
    items = [it for it in ITEMS if it.get("group") == key and it["kind"] != "enumerator"]
    enumerators = [it for it in ITEMS if it.get("group") == key and it["kind"] == "enumerator"]
    counts[key] = len(items) + len(enumerators)
    body = [f"<p>{html.escape(intro)}</p><ul>"]
    body += [f'<li><a href="#{it["name"]}"><code>{it["name"]}</code></a> <span class="kind">{it["kind"]}</span></li>'
             for it in items]
    body.append("</ul>")
    for it in items + enumerators:
        n = it["name"]
        names = []
        if it["kind"] == "function":
            names.append("C++: " + (", ".join(f"<code>{html.escape(x)}</code>" for x in CPP.get(n, [])) or "the C function"))
            if n.endswith("_destroy") and n != "parlops_finalize":
                names[-1] = "C++: the owning class's destructor"
            f = FORTRAN.get(n, [])
            names.append("Fortran: " + (", ".join(f"<code>{x}</code>" for x in f) or
                                       "none (" + ("parlops_comm_create_f" if n == "parlops_comm_create" else "C only") + ")"))
            if n == "parlops_comm_create":
                names.append("Python: <code>parlops.Comm(mpi4py_comm)</code> (through parlops_comm_create_f: an "
                             "MPI_Comm's C type differs between MPI libraries)")
            else:
                names.append("Python: " + ", ".join(f"<code>{html.escape(x)}</code>"
                                                    for x in PY.get(n, []) + [f"parlops.capi.{n}"]))
        elif it["kind"] in ("constant", "enumerator"):
            names.append(f"Fortran: <code>{n}</code>; Python: <code>parlops.capi.{n}</code>")
        body.append(f'<div class="item" id="{n}"><h3><code>{n}</code> <span class="kind">{it["kind"]}'
                    + (f' of <a href="#{it["enum"]}"><code>{it["enum"]}</code></a>' if it.get("enum") else "")
                    + f'</span></h3><p>{link_names(it["doc"])}</p><pre>{html.escape(it["decl"])}</pre>'
                    + (f'<p class="names">{"; ".join(names)}</p>' if names else "") + "</div>")
    write(f"{key}.html", title, "\n".join(body))

idx = ["<p>The C API of parlops (<code>include/parlops.h</code>), every function, type and constant, "
       "generated from the header's comments, with the names of the C++ (<code>include/parlops.hpp</code>), "
       "Fortran (<code>module parlops</code>) and Python (<code>import parlops</code>) layers.</p><ul>"]
idx += [f'<li><a href="{k}.html">{html.escape(t)}</a>: {html.escape(i)} ({counts[k]} items)</li>' for k, t, i in PAGES]
idx.append("</ul><h2>Guides</h2><ul>")
idx += [f'<li><a href="guides/{s.replace("/", "_")}">{html.escape(t)}</a></li>' for s, t in guides]
idx.append("</ul><h2>Examples</h2><ul>")
idx += [f'<li><a href="examples/{os.path.basename(s)}.txt">{html.escape(s)}</a></li>' for s in examples]
idx.append("</ul>")
write("index.html", "parlops API reference", "\n".join(idx))

# ---- every link resolves
anchors = {}
for f in os.listdir(OUT):
    if f.endswith(".html"):
        anchors[f] = set(re.findall(r'id="([^"]+)"', open(os.path.join(OUT, f)).read()))
links = 0
for f in anchors:
    for href in re.findall(r'href="([^"]+)"', open(os.path.join(OUT, f)).read()):
        links += 1
        path, _, frag = href.partition("#")
        target = path or f
        if not os.path.exists(os.path.join(OUT, target)):
            errors.append(f"{f}: broken link {href}")
        elif frag and frag not in anchors.get(target, set()):
            errors.append(f"{f}: broken anchor {href}")

if errors:
    print("\n".join("docs: " + e for e in errors))
    print(f"docs: {len(errors)} problem(s): the reference is not built")
    sys.exit(1)
nf = sum(1 for it in ITEMS if it["kind"] == "function")
print(f"docs: {OUT}/index.html: {nf} functions, {len(ITEMS) - nf} types and constants on {len(PAGES)} pages, "
      f"every one documented; {links} links, none broken")
