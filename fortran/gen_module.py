#!/usr/bin/env python3
"""Generate fortran/parlops.f90 (module parlops, iso_c_binding) from include/parlops.h.

Every C function of the header gets an interface, or is named in C_ONLY with the reason; anything
this script cannot map stops it with an error (and `make header` / `make header-check` with it).

How a parameter is declared:
  - by its C type alone where the type says everything: values (int64_t, double, enum typedefs,
    parlops_scalar, callbacks), one handle (`const parlops_op *a`: type(c_ptr), value) and untyped
    addresses (`void *`, `const void *`, `char *`: type(c_ptr), value, e.g. c_loc(array));
  - by the explicit table PARAMS, keyed by function and parameter, for every other pointer: whether
    it is one output value, an input or output array, an output handle, an array of handles, ...
    A pointer parameter missing from PARAMS, an entry whose kind does not fit its C type, and an
    entry for a parameter the header does not have, are all errors.
The derived types (parlops_scalar, parlops_solve_info) are generated from the header's structs.
Usage: gen_module.py include/parlops.h > fortran/parlops.f90
"""
import re
import sys

HEADER = open(sys.argv[1]).read()

# Functions without a Fortran interface, and why.
C_ONLY = {
    "parlops_comm_create": "takes a C MPI_Comm; Fortran uses parlops_comm_create_f",
}

# Every pointer parameter whose Fortran form its C type does not decide:
#   out / inout          one value by reference          (T *)
#   in_array / out_array an array, intent(in) / (out)     (T *, const T *)
#   handle_out           a new handle, by reference       (parlops_X **)
#   handle_inout         a handle that is read and reset  (parlops_X **: the destroy functions)
#   handle_array_in      an array of handles              (const parlops_X *const *)
#   handle_array         an array of handles written to   (parlops_X *const *)
#   ptr_out              an address written by the call   (void **, const void **, const double **)
#   address              any pointer passed as a c_ptr by value (c_null_ptr from Fortran)
PARAMS = """
parlops_comm_create_nccl       out:handle_out
parlops_comm_wrap_nccl         out:handle_out
parlops_comm_create_f          out:handle_out
parlops_comm_rank              rank:out
parlops_comm_size              size:out
parlops_comm_destroy           comm:handle_inout
parlops_comm_reduction_count   count:out
parlops_layout_create          out:handle_out
parlops_layout_create_nd       global_shape:in_array out:handle_out
parlops_layout_shape           ndim:out shape:out_array
parlops_layout_global_len      n:out
parlops_layout_local_range     start:out len:out
parlops_layout_rank_range      start:out len:out
parlops_layout_partition       partition:out
parlops_layout_equal           equal:out
parlops_layout_destroy         layout:handle_inout
parlops_version                major:out minor:out patch:out
parlops_init                   argc:inout argv:address
parlops_config_report          needed:out
parlops_solver_view            needed:out
parlops_solver_log             count:out seconds:out outside_seconds:out bytes:out
parlops_solver_log_view        needed:out
parlops_op_size                rows:out cols:out
parlops_op_dtype               dtype:out
parlops_op_layouts             rows:handle_out cols:handle_out
parlops_op_create_vecs         x_like:handle_out y_like:handle_out
parlops_op_dottest             relative_error:out
parlops_op_destroy             a:handle_inout
parlops_op_sum                 out:handle_out
parlops_op_difference          out:handle_out
parlops_op_product             out:handle_out
parlops_op_scale               out:handle_out
parlops_op_adjoint             out:handle_out
parlops_op_transpose           out:handle_out
parlops_op_conj                out:handle_out
parlops_op_power               out:handle_out
parlops_op_create_shell        out:handle_out
parlops_prox_create_l1         out:handle_out
parlops_prox_create_l2         out:handle_out
parlops_prox_create_l21        out:handle_out
parlops_prox_create_l2_op      out:handle_out
parlops_prox_create_shell      out:handle_out
parlops_prox_destroy           p:handle_inout
parlops_prox_value             value:out
parlops_proximal_gradient      iterations:out
parlops_op_create_shell_with_diagonal out:handle_out
parlops_op_create_inverse      out:handle_out
parlops_op_create_block_jacobi out:handle_out
parlops_op_create_chebyshev    out:handle_out
parlops_op_create_boomeramg    options:in_array out:handle_out
parlops_amg_options_init       options:out
parlops_hypre_options_create   out:handle_out
parlops_hypre_options_destroy  o:handle_inout
parlops_hypre_options_set_amg  options:in_array
parlops_hypre_options_describe needed:out
parlops_options_create         out:handle_out
parlops_options_destroy        o:handle_inout
parlops_options_insert_args    argv:address
parlops_options_left           needed:out
parlops_rigid_body_modes       coords:in_array modes:out_array
parlops_op_create_boomeramg_with vectors:in_array out:handle_out
parlops_op_create_ams          coords:address interpolations:handle_array_in out:handle_out
parlops_op_create_ads          coords:address interpolations:handle_array_in out:handle_out
parlops_solver_eigenvalue_estimates emin:out emax:out
parlops_op_create_csr          out:handle_out
parlops_op_create_parcsr       col_map_offd:in_array out:handle_out
parlops_op_csr_arrays          diag_values:ptr_out offd_values:ptr_out
parlops_op_refresh             setups_run:out
parlops_op_setup_count         count:out
parlops_op_create_dense        out:handle_out
parlops_op_identity            out:handle_out
parlops_op_zero                out:handle_out
parlops_op_diagonal_matrix     out:handle_out
parlops_op_block_diag          local_ops:handle_array_in out:handle_out
parlops_op_vstack              local_ops:handle_array_in out:handle_out
parlops_op_hstack              local_ops:handle_array_in out:handle_out
parlops_op_first_derivative    out:handle_out
parlops_op_second_derivative   out:handle_out
parlops_op_laplacian           weights:in_array sampling:in_array out:handle_out
parlops_op_gradient            sampling:in_array out:handle_out
parlops_op_poisson             dims:in_array out:handle_out
parlops_op_fft                 axes:in_array ifftshift_before:in_array fftshift_after:in_array out:handle_out
parlops_op_nonstationary_convolve1d ih:in_array out:handle_out
parlops_solver_set_null_space  vecs:handle_array_in
parlops_vec_block_dot          x:handle_array_in y:handle_array_in out:out_array
parlops_solver_solve_many      b:handle_array_in x:handle_array
parlops_solver_info_column     info:out
parlops_vec_maxpy              a:in_array x:handle_array_in
parlops_vec_orthonormalize     v:handle_array r:out_array
parlops_eig_randomized         omega:handle_array_in eigenvalues:out_array u:handle_array
parlops_eig_lanczos            eigenvalues:out_array residuals:out_array vecs:handle_array steps:out
parlops_eig_krylov_schur       eigenvalues:out_array residuals:out_array vecs:handle_array products:out
parlops_op_low_rank            u:handle_array_in d:in_array out:handle_out
parlops_layout_stack           parts:handle_array_in out:handle_out
parlops_op_block               blocks:handle_array_in out:handle_out
parlops_op_block_lower_triangular diag:handle_array_in out:handle_out
parlops_op_fredholm1           out:handle_out
parlops_op_mdc                 out:handle_out
parlops_halo_block             dims:in_array proc_grid:in_array start:out_array shape:out_array
parlops_op_halo                dims:in_array proc_grid:in_array halo:in_array out:handle_out
parlops_op_stacked_block_diag  ops:handle_array_in out:handle_out
parlops_summa_tile             start:out len:out
parlops_op_create_dense_summa  out:handle_out
parlops_solver_create          out:handle_out
parlops_solver_info            info:out
parlops_solver_get_tolerances  rtol:out atol:out dtol:out max_iter:out
parlops_solver_history         norms:ptr_out len:out
parlops_solver_residual_history norms:ptr_out len:out
parlops_solver_destroy         s:handle_inout
parlops_op_power_iteration     eigenvalue:out iterations:out
parlops_vec_create             out:handle_out
parlops_vec_create_with_array  out:handle_out
parlops_vec_duplicate          out:handle_out
parlops_vec_local_array        data:ptr_out local_len:out
parlops_vec_to_memory          out:handle_out
parlops_vec_layout             out:handle_out
parlops_vec_dtype              dtype:out
parlops_vec_memory             memory:out
parlops_vec_dot                out:out
parlops_vec_norm               out:out
parlops_comm_split             out:handle_out
parlops_vec_dot_groups         out:out
parlops_vec_norm_groups        out:out
parlops_vec_redistribute       out:handle_out
parlops_vec_destroy            v:handle_inout
"""


def die(msg):
    sys.exit(f"fortran/gen_module.py: {msg}")


# What the header declares: enum typedefs of int32_t, C enums, opaque handles, callbacks, structs.
INT_TYPEDEFS = set(re.findall(r"^typedef int32_t (\w+);", HEADER, re.M))
C_ENUMS = set(re.findall(r"^typedef enum \{[^}]*\} (\w+);", HEADER, re.M | re.S))
HANDLES = set(re.findall(r"^typedef struct (\w+) \1;", HEADER, re.M))
CALLBACKS = set(re.findall(r"^typedef [\w ]+\(\*(\w+)\)\(", HEADER, re.M))
STRUCTS = {
    m.group(2): m.group(1)
    for m in re.finditer(r"^typedef struct \{\n(.*?)\n\} (\w+);", HEADER, re.M | re.S)
}

# One value of a C type: its Fortran type.
VALUE = {
    "int64_t": "integer(c_int64_t)",
    "int32_t": "integer(c_int32_t)",
    "uint64_t": "integer(c_int64_t)",
    "int": "integer(c_int)",
    "MPI_Fint": "integer(c_int)",
    "double": "real(c_double)",
    "size_t": "integer(c_size_t)",
    "bool": "logical(c_bool)",
}


def value_type(base):
    if base in VALUE:
        return VALUE[base]
    if base in INT_TYPEDEFS:
        return "integer(c_int32_t)"
    if base in C_ENUMS:
        return "integer(c_int)"
    if base in STRUCTS:
        return f"type({base})"
    return None


def by_type(ctype, base, ptr):
    """The declaration decided by the C type alone, or None when the table must decide."""
    if ptr == 0:
        if base in CALLBACKS:
            return "type(c_funptr), value"
        t = value_type(base)
        return f"{t}, value" if t else None
    if ptr == 1 and (base in HANDLES or base in ("void", "char")):
        return "type(c_ptr), value"
    return None


def by_table(func, name, ctype, base, ptr, kind):
    """The declaration for a table entry, checked against the C type."""
    const = ctype.startswith("const ")
    t = value_type(base) if ptr == 1 else None
    decl = None
    if kind in ("out", "inout") and t and not const:
        decl = f"{t}, intent(inout)" if kind == "inout" else f"{t}, intent(out)"
    elif kind == "in_array" and t and const:
        decl = f"{t}, intent(in) :: {name}(*)"
    elif kind == "out_array" and t and not const:
        decl = f"{t}, intent(out) :: {name}(*)"
    elif kind in ("handle_out", "handle_inout") and ptr == 2 and base in HANDLES and not const:
        decl = "type(c_ptr), intent(out)" if kind == "handle_out" else "type(c_ptr), intent(inout)"
    elif kind == "handle_array_in" and ptr == 2 and base in HANDLES and const:
        decl = f"type(c_ptr), intent(in) :: {name}(*)"
    elif kind == "handle_array" and ptr == 2 and base in HANDLES and not const:
        decl = f"type(c_ptr), intent(in) :: {name}(*)"
    elif kind == "ptr_out" and ptr == 2 and base in ("void", "double"):
        decl = "type(c_ptr), intent(out)"
    elif kind == "address" and ptr >= 1:
        decl = "type(c_ptr), value"
    if decl is None:
        die(f"{func}({name}): kind {kind!r} does not fit the C type {ctype!r}")
    return decl


def parse_table():
    table = {}
    for line in PARAMS.strip().splitlines():
        func, *entries = line.split()
        for e in entries:
            name, kind = e.split(":")
            if (func, name) in table:
                die(f"{func}({name}) twice in PARAMS")
            table[(func, name)] = kind
    return table


def struct_type(name, body):
    """A bind(C) derived type from the header's `typedef struct { ... } name;`."""
    lines = [f"  type, bind(C) :: {name}"]
    for field in re.findall(r"^\s*([\w ]+?)\s+(\w+);", body, re.M):
        t = value_type(field[0].strip())
        if t is None:
            die(f"struct {name}: field {field[1]} of C type {field[0]!r} has no Fortran type")
        lines.append(f"    {t} :: {field[1]}")
    lines.append(f"  end type {name}")
    return lines


def main():
    out = []
    w = out.append
    w("! GENERATED by fortran/gen_module.py from include/parlops.h (make header). Do not edit.")
    w("!")
    w("! Module parlops: the whole C API of parlops for Fortran 2003+ (iso_c_binding).")
    w("! Handles are type(c_ptr); pass c_null_ptr for an optional pointer argument. Communicators come")
    w("! from parlops_comm_create_f(comm, c) with `use mpi` (integer comm) or comm%MPI_VAL with `use mpi_f08`.")
    w("! Arrays cross as c_loc(array); parlops_vec_local_array gives a c_ptr for c_f_pointer.")
    w("! N-D shapes are in C order, slowest axis first: a Fortran array a(nx, ny) has C shape [ny, nx],")
    w("! and global indices (CSR columns, ranges) start at 0.")
    w("module parlops")
    w("  use, intrinsic :: iso_c_binding")
    w("  implicit none")
    w("")
    for name, body in STRUCTS.items():
        for line in struct_type(name, body):
            w(line)
        w("")
    # constants: #define NAME value, and enum members NAME = value
    for m in re.finditer(r"^#define (PARLOPS_[A-Z0-9_]+) (-?\d+)\s*$", HEADER, re.M):
        w(f"  integer(c_int), parameter :: {m.group(1)} = {m.group(2)}")
    for m in re.finditer(r"^\s+(PARLOPS_[A-Z0-9_]+) = (-?\d+),", HEADER, re.M):
        w(f"  integer(c_int), parameter :: {m.group(1)} = {m.group(2)}")
    w("")
    w("  interface")
    w("    function c_strlen(s) bind(C, name='strlen')")
    w("      import :: c_ptr, c_size_t")
    w("      type(c_ptr), value :: s")
    w("      integer(c_size_t) :: c_strlen")
    w("    end function c_strlen")
    body = HEADER.split('extern "C" {', 1)[1]
    protos = re.findall(r"^([A-Za-z_][\w \*]*?[\s\*])(parlops_\w+)\(([^;]*?)\);", body, re.M | re.S)
    table = parse_table()
    used = set()
    c_only = []
    for ret, name, params in protos:
        ret = ret.strip()
        params = " ".join(params.split())
        plist = [] if params in ("", "void") else [p.strip() for p in params.split(",")]
        if name in C_ONLY:
            c_only.append(name)
            continue
        decls = []
        for p in plist:
            m = re.match(r"(.*?)(\w+)$", p)
            ctype, pname = m.group(1).strip(), m.group(2)
            ptr = ctype.count("*")
            base = ctype.replace("const", " ").replace("*", "").strip()
            if (name, pname) in table:
                used.add((name, pname))
                decls.append((pname, by_table(name, pname, ctype, base, ptr, table[(name, pname)])))
                continue
            ft = by_type(ctype, base, ptr)
            if ft is None:
                die(f"{name}({pname}): C type {ctype!r} needs an entry in PARAMS (or the function in C_ONLY)")
            decls.append((pname, ft))
        if ret == "parlops_status":
            rdecl = f"integer(c_int) :: {name}"
        elif ret == "const char *":
            rdecl = f"type(c_ptr) :: {name}"
        else:
            raise SystemExit(f"unmapped return type {ret!r} of {name}")
        names = [n for n, _ in decls]
        lines, cur = [], f"    function {name}("
        for i, n in enumerate(names):
            piece = n + (", " if i + 1 < len(names) else "")
            if len(cur) + len(piece) > 100:
                lines.append(cur.rstrip() + " &")
                cur = "        "
            cur += piece
        lines.append(cur + ") &")
        for l in lines:
            w(l)
        w(f"        bind(C, name='{name}')")
        w("      import")
        w("      implicit none")
        for n, ft in decls:
            w(f"      {ft}" if "::" in ft else f"      {ft} :: {n}")
        w(f"      {rdecl}")
        w(f"    end function {name}")
    w("  end interface")
    w("")
    w("contains")
    w("")
    w("  !> A real scalar for calls that take parlops_scalar: parlops_real(2.0d0).")
    w("  pure function parlops_real(x) result(s)")
    w("    real(c_double), intent(in) :: x")
    w("    type(parlops_scalar) :: s")
    w("    s%re = x")
    w("    s%im = 0.0_c_double")
    w("  end function parlops_real")
    w("")
    w("  !> Copy a NUL-terminated C string into a Fortran string.")
    w("  function parlops_c_string(p) result(s)")
    w("    type(c_ptr), intent(in) :: p")
    w("    character(len=:), allocatable :: s")
    w("    character(kind=c_char), pointer :: chars(:)")
    w("    integer :: i, n")
    w("    if (.not. c_associated(p)) then")
    w("      s = ''")
    w("      return")
    w("    end if")
    w("    n = int(c_strlen(p))")
    w("    call c_f_pointer(p, chars, [n])")
    w("    allocate(character(len=n) :: s)")
    w("    do i = 1, n")
    w("      s(i:i) = chars(i)")
    w("    end do")
    w("  end function parlops_c_string")
    w("")
    for kind, ftype in (("int", "integer(c_int64_t)"), ("real", "real(c_double)")):
        w(f"  !> parlops_hypre_options_set_{kind} with a Fortran string for the option's name.")
        w(f"  function parlops_hypre_options_set_{kind}_f(o, name, value) result(status)")
        w("    type(c_ptr), intent(in) :: o")
        w("    character(len=*), intent(in) :: name")
        w(f"    {ftype}, intent(in) :: value")
        w("    integer(c_int) :: status")
        w("    character(kind=c_char), allocatable, target :: buf(:)")
        w("    integer :: i")
        w("    allocate(buf(len(name) + 1))")
        w("    do i = 1, len(name)")
        w("      buf(i) = name(i:i)")
        w("    end do")
        w("    buf(len(name) + 1) = c_null_char")
        w(f"    status = parlops_hypre_options_set_{kind}(o, c_loc(buf), value)")
        w(f"  end function parlops_hypre_options_set_{kind}_f")
        w("")
    # Fortran strings for the options' text arguments
    for fname, args, what in (
        ("parlops_options_insert_string", ("o", "text"), "parlops_options_insert_string with a Fortran string."),
        ("parlops_solver_set_from_options", ("s", "o", "prefix"), "parlops_solver_set_from_options with a Fortran string prefix ('' for none). [collective]"),
    ):
        handles, text = args[:-1], args[-1]
        w(f"  !> {what}")
        w(f"  function {fname}_f({', '.join(args)}) result(status)")
        for h in handles:
            w(f"    type(c_ptr), intent(in) :: {h}")
        w(f"    character(len=*), intent(in) :: {text}")
        w("    integer(c_int) :: status")
        w("    character(kind=c_char), allocatable, target :: buf(:)")
        w("    integer :: i")
        w(f"    allocate(buf(len({text}) + 1))")
        w(f"    do i = 1, len({text})")
        w(f"      buf(i) = {text}(i:i)")
        w("    end do")
        w(f"    buf(len({text}) + 1) = c_null_char")
        w(f"    status = {fname}({', '.join(handles)}, c_loc(buf))")
        w(f"  end function {fname}_f")
        w("")
    w("  !> parlops_options_insert_args with this program's command line (get_command_argument).")
    w("  function parlops_options_insert_command_line_f(o) result(status)")
    w("    type(c_ptr), intent(in) :: o")
    w("    integer(c_int) :: status")
    w("    type(c_ptr), allocatable, target :: ptrs(:)")
    w("    character(kind=c_char), allocatable, target :: store(:)")
    w("    character(len=:), allocatable :: a")
    w("    integer :: n, i, j, l, total, off")
    w("    n = command_argument_count()")
    w("    total = 0")
    w("    do i = 0, n")
    w("      call get_command_argument(i, length=l)")
    w("      total = total + l + 1")
    w("    end do")
    w("    allocate(store(total), ptrs(n + 1))")
    w("    off = 1")
    w("    do i = 0, n")
    w("      call get_command_argument(i, length=l)")
    w("      allocate(character(len=l) :: a)")
    w("      call get_command_argument(i, a)")
    w("      do j = 1, l")
    w("        store(off + j - 1) = a(j:j)")
    w("      end do")
    w("      deallocate(a)")
    w("      store(off + l) = c_null_char")
    w("      ptrs(i + 1) = c_loc(store(off))")
    w("      off = off + l + 1")
    w("    end do")
    w("    status = parlops_options_insert_args(o, int(n + 1, c_int), c_loc(ptrs))")
    w("  end function parlops_options_insert_command_line_f")
    w("")
    w("  !> This thread's last error message.")
    w("  function parlops_last_error_f() result(s)")
    w("    character(len=:), allocatable :: s")
    w("    s = parlops_c_string(parlops_last_error())")
    w("  end function parlops_last_error_f")
    w("")
    w("  !> The words for a status value.")
    w("  function parlops_status_string_f(status) result(s)")
    w("    integer(c_int), intent(in) :: status")
    w("    character(len=:), allocatable :: s")
    w("    s = parlops_c_string(parlops_status_string(status))")
    w("  end function parlops_status_string_f")
    w("")
    for fname, arg, what in (
        ("parlops_config_report", "comm", "The configuration report as a Fortran string. [collective over comm when comm is not null]"),
        ("parlops_solver_view", "s", "What the next solve of s will run, as a Fortran string (parlops_solver_view)."),
        ("parlops_options_left", "o", "The options no solver used, as a Fortran string (parlops_options_left)."),
        ("parlops_solver_log_view", "s", "Where the last solve's time went, over the ranks, as a Fortran string (parlops_solver_log_view). [collective]"),
    ):
        w(f"  !> {what}")
        w(f"  function {fname}_f({arg}, text) result(status)")
        w(f"    type(c_ptr), intent(in) :: {arg}")
        w("    character(len=:), allocatable, intent(out) :: text")
        w("    integer(c_int) :: status")
        w("    integer(c_size_t) :: needed, length")
        w("    character(kind=c_char), allocatable, target :: buf(:)")
        w("    integer :: i")
        w("    text = ''")
        w(f"    status = {fname}({arg}, c_null_ptr, 0_c_size_t, needed)")
        w("    if (status /= PARLOPS_OK) return")
        w("    allocate(buf(needed))")
        w("    length = needed")
        w(f"    status = {fname}({arg}, c_loc(buf), length, needed)")
        w("    if (status /= PARLOPS_OK) return")
        w("    deallocate(text)")
        w("    allocate(character(len=int(needed) - 1) :: text)")
        w("    do i = 1, int(needed) - 1")
        w("      text(i:i) = buf(i)")
        w("    end do")
        w(f"  end function {fname}_f")
        w("")
    w("end module parlops")
    stale = sorted(set(table) - used)
    if stale:
        die("PARAMS entries for parameters the header does not have: " + ", ".join(f"{f}({p})" for f, p in stale))
    missing = sorted(set(C_ONLY) - set(c_only))
    if missing:
        die("C_ONLY names functions the header does not have: " + ", ".join(missing))
    w("! C-only functions (no Fortran interface): " + ", ".join(c_only))
    print("\n".join(out))


main()
