"""The functions include/parlops.h declares, read one way for every generator that needs them (the
Python bindings, the version script's check, the ABI stub, the API reference)."""
import re

PROTO = re.compile(r"^([A-Za-z_][\w \*]*?[\s\*])(parlops_\w+)\(([^;]*?)\);", re.M | re.S)


def split_params(params):
    """[(C type, name)] of a prototype's parameter text."""
    params = " ".join(params.split())
    plist = [] if params in ("", "void") else [p.strip() for p in params.split(",")]
    out = []
    for p in plist:
        m = re.match(r"(.*?)(\w+)$", p)
        out.append((m.group(1).strip(), m.group(2)))
    return out


def prototypes(header_text):
    """[(return type, name, parameter text)] of every function in the header's extern "C" block."""
    body = header_text.split('extern "C" {', 1)[1]
    return [(ret.strip(), name, " ".join(params.split())) for ret, name, params in PROTO.findall(body)]


def functions(header_text):
    """The sorted names of the header's functions."""
    return sorted({name for _, name, _ in prototypes(header_text)})
