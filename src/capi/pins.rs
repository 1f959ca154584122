//! Every C constant of include/parlops.h pinned to its value, and every enumeration table of the
//! core (`code_table!`) checked against the header both ways: a table line without its C constant,
//! a C constant without its table line, or a constant whose value moves, fails here.

use std::collections::BTreeMap;
use std::ffi::CStr;

use super::eigen::{
    PARLOPS_EIG_LARGEST, PARLOPS_EIG_SMALLEST, PARLOPS_RANDOMIZED_DOUBLE_PASS,
    PARLOPS_RANDOMIZED_SINGLE_PASS,
};
use super::eigen_ks::PARLOPS_EIG_NEAREST;
use super::hypre_opts::{PARLOPS_HYPRE_ADS, PARLOPS_HYPRE_AMS, PARLOPS_HYPRE_BOOMERAMG};
use super::misc::parlops_status_string;
use super::op::{
    PARLOPS_DOF_BLOCKED, PARLOPS_DOF_INTERLEAVED, PARLOPS_FFT_NORM_1_OVER_N, PARLOPS_FFT_NORM_NONE,
    PARLOPS_LOCAL_IC0, PARLOPS_LOCAL_ILU0, PARLOPS_LOCAL_SSOR,
};
use super::prox::{
    PARLOPS_ACCELERATION_FISTA, PARLOPS_ACCELERATION_NONE, PARLOPS_ACCELERATION_VANDENBERGHE,
};
use super::solver::*;
use super::solver_opts::{
    PARLOPS_LOG_COPY, PARLOPS_LOG_HALO, PARLOPS_LOG_OPERATOR, PARLOPS_LOG_PRECONDITIONER,
    PARLOPS_LOG_REDUCTION, PARLOPS_LOG_REST, PARLOPS_LOG_SETUP, PARLOPS_LOG_SOLVE,
    PARLOPS_LOG_VECTOR, PARLOPS_MONITOR_CONTINUE, PARLOPS_MONITOR_CONVERGED, PARLOPS_MONITOR_STOP,
};
use super::types::*;
use super::vec::{PARLOPS_RANDOM_GAUSSIAN, PARLOPS_RANDOM_RADEMACHER, PARLOPS_RANDOM_UNIFORM};
use crate::error::ErrorKind;
use crate::memory::Location;
use crate::scalar::DType;
use crate::solver::{Method, Orthog, PcSide, Reason, Reference, SumOrder, Threshold};
use crate::vector::Partition;
use crate::vector::random::Distribution;
use parlops_reason::*;
use parlops_status::*;

/// `(name, the Rust constant's value, the pinned value)`.
macro_rules! pins {
    ($($c:ident = $v:literal),+ $(,)?) => {
        &[$((stringify!($c), $c as i64, $v)),+]
    };
}

/// The ABI: these values never change.
const PINNED: &[(&str, i64, i64)] = pins![
    PARLOPS_DECIDE = -1,
    PARLOPS_ALL_RANKS = -1,
    PARLOPS_OK = 0,
    PARLOPS_ERR_NULL_ARGUMENT = 1,
    PARLOPS_ERR_INVALID_ARGUMENT = 2,
    PARLOPS_ERR_SIZE_MISMATCH = 3,
    PARLOPS_ERR_DTYPE_MISMATCH = 4,
    PARLOPS_ERR_LAYOUT_MISMATCH = 5,
    PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS = 6,
    PARLOPS_ERR_MEMORY_LOCATION = 7,
    PARLOPS_ERR_NO_DEVICE = 8,
    PARLOPS_ERR_MPI = 9,
    PARLOPS_ERR_CUDA = 10,
    PARLOPS_ERR_NCCL = 11,
    PARLOPS_ERR_CALLBACK = 12,
    PARLOPS_ERR_NOT_SUPPORTED = 13,
    PARLOPS_ERR_OUT_OF_MEMORY = 14,
    PARLOPS_ERR_INTERNAL = 15,
    PARLOPS_ERR_INVALID_HANDLE = 16,
    PARLOPS_ERR_NOT_CONVERGED = 17,
    PARLOPS_ERR_BUSY = 18,
    PARLOPS_ERR_VERSION_MISMATCH = 19,
    PARLOPS_ITERATING = 0,
    PARLOPS_CONVERGED_RTOL = 2,
    PARLOPS_CONVERGED_ATOL = 3,
    PARLOPS_CONVERGED_USER = 4,
    PARLOPS_CONVERGED_NEG_CURVE = 5,
    PARLOPS_CONVERGED_STEP_LENGTH = 6,
    PARLOPS_CONVERGED_COST_INITIAL = 10,
    PARLOPS_CONVERGED_COST_DATA = 11,
    PARLOPS_DIVERGED_MAX_ITER = -3,
    PARLOPS_DIVERGED_DTOL = -4,
    PARLOPS_DIVERGED_BREAKDOWN = -5,
    PARLOPS_DIVERGED_INDEFINITE_MATRIX = -8,
    PARLOPS_DIVERGED_NAN = -9,
    PARLOPS_DIVERGED_USER = -10,
    PARLOPS_METHOD_CG = 0,
    PARLOPS_METHOD_CG_SINGLE_REDUCTION = 1,
    PARLOPS_METHOD_CG_PIPELINED = 2,
    PARLOPS_METHOD_CGLS = 3,
    PARLOPS_METHOD_LSQR = 4,
    PARLOPS_METHOD_GMRES = 5,
    PARLOPS_METHOD_FGMRES = 6,
    PARLOPS_METHOD_BICGSTAB = 7,
    PARLOPS_METHOD_MINRES = 8,
    PARLOPS_METHOD_ISTA = 9,
    PARLOPS_METHOD_FISTA = 10,
    PARLOPS_THRESHOLD_SOFT = 0,
    PARLOPS_THRESHOLD_HARD = 1,
    PARLOPS_THRESHOLD_HALF = 2,
    PARLOPS_ACCELERATION_NONE = 0,
    PARLOPS_ACCELERATION_VANDENBERGHE = 1,
    PARLOPS_ACCELERATION_FISTA = 2,
    PARLOPS_FFT_NORM_NONE = 0,
    PARLOPS_FFT_NORM_1_OVER_N = 1,
    PARLOPS_NORM_TYPE_UNPRECONDITIONED = 0,
    PARLOPS_NORM_TYPE_NATURAL = 1,
    PARLOPS_REFERENCE_RHS = 0,
    PARLOPS_REFERENCE_INITIAL_RESIDUAL = 1,
    PARLOPS_PC_SIDE_DEFAULT = 0,
    PARLOPS_PC_LEFT = 1,
    PARLOPS_RANDOM_UNIFORM = 0,
    PARLOPS_RANDOM_GAUSSIAN = 1,
    PARLOPS_RANDOM_RADEMACHER = 2,
    PARLOPS_LOCAL_ILU0 = 0,
    PARLOPS_LOCAL_IC0 = 1,
    PARLOPS_LOCAL_SSOR = 2,
    PARLOPS_DOF_INTERLEAVED = 0,
    PARLOPS_DOF_BLOCKED = 1,
    PARLOPS_HYPRE_BOOMERAMG = 0,
    PARLOPS_HYPRE_AMS = 1,
    PARLOPS_HYPRE_ADS = 2,
    PARLOPS_ORTHOG_CLASSICAL = 0,
    PARLOPS_ORTHOG_MODIFIED = 1,
    PARLOPS_SUM_BLOCKED = 0,
    PARLOPS_SUM_SEQUENTIAL = 1,
    PARLOPS_MONITOR_CONTINUE = 0,
    PARLOPS_MONITOR_STOP = 1,
    PARLOPS_MONITOR_CONVERGED = 2,
    PARLOPS_LOG_SETUP = 0,
    PARLOPS_LOG_OPERATOR = 1,
    PARLOPS_LOG_PRECONDITIONER = 2,
    PARLOPS_LOG_REDUCTION = 3,
    PARLOPS_LOG_HALO = 4,
    PARLOPS_LOG_VECTOR = 5,
    PARLOPS_LOG_COPY = 6,
    PARLOPS_LOG_SOLVE = 7,
    PARLOPS_LOG_REST = 8,
    PARLOPS_EIG_LARGEST = 0,
    PARLOPS_EIG_SMALLEST = 1,
    PARLOPS_EIG_NEAREST = 2,
    PARLOPS_RANDOMIZED_DOUBLE_PASS = 0,
    PARLOPS_RANDOMIZED_SINGLE_PASS = 1,
    PARLOPS_F32 = 0,
    PARLOPS_F64 = 1,
    PARLOPS_C64 = 2,
    PARLOPS_C128 = 3,
    PARLOPS_MEMORY_HOST = 0,
    PARLOPS_MEMORY_CUDA = 1,
    PARLOPS_PARTITION_SCATTER = 0,
    PARLOPS_PARTITION_BROADCAST = 1,
    PARLOPS_PARTITION_UNSAFE_BROADCAST = 2,
    PARLOPS_NORM_0 = 0,
    PARLOPS_NORM_1 = 1,
    PARLOPS_NORM_2 = 2,
    PARLOPS_NORM_INF = 3,
    PARLOPS_NORM_NEG_INF = 4,
    PARLOPS_NORM_P = 5,
    PARLOPS_INDEX_I32 = 0,
    PARLOPS_INDEX_I64 = 1,
    PARLOPS_COPY = 0,
    PARLOPS_WRAP = 1,
    PARLOPS_CENTERED = 0,
    PARLOPS_FORWARD = 1,
    PARLOPS_BACKWARD = 2,
];

/// The integer constants of the header: `#define PARLOPS_X v` and enum members `PARLOPS_X = v,`.
fn header_constants() -> BTreeMap<String, i64> {
    let header = include_str!("../../include/parlops.h");
    let mut out = BTreeMap::new();
    for line in header.lines() {
        let t = line.trim();
        let (name, value) = if let Some(rest) = t.strip_prefix("#define ") {
            match rest.split_once(' ') {
                Some((n, v)) => (n, v),
                None => continue,
            }
        } else if let Some((n, v)) = t.split_once(" = ") {
            (n, v.trim_end_matches(','))
        } else {
            continue;
        };
        if let (true, Ok(v)) = (name.starts_with("PARLOPS_"), value.parse::<i64>()) {
            assert!(
                out.insert(name.to_string(), v).is_none(),
                "{name} twice in the header"
            );
        }
    }
    out
}

/// A core table: its name, its (C name, code) rows, and which header names belong to it.
type Table = (&'static str, Vec<(&'static str, i32)>, fn(&str) -> bool);

/// Every table of the core.
fn tables() -> Vec<Table> {
    fn rows<E: Copy>(all: &[E], f: fn(E) -> (&'static str, i32)) -> Vec<(&'static str, i32)> {
        all.iter().map(|&e| f(e)).collect()
    }
    vec![
        (
            "ErrorKind",
            rows(ErrorKind::ALL, |e| (e.c_name(), e.code())),
            |n| n.starts_with("PARLOPS_ERR_"),
        ),
        ("DType", rows(DType::ALL, |e| (e.c_name(), e.code())), |n| {
            ["PARLOPS_F", "PARLOPS_C"]
                .iter()
                .any(|p| n.strip_prefix(p).is_some_and(|d| d.parse::<u32>().is_ok()))
        }),
        (
            "Location",
            rows(Location::ALL, |e| (e.c_name(), e.code())),
            |n| n.starts_with("PARLOPS_MEMORY_"),
        ),
        (
            "Partition",
            rows(Partition::ALL, |e| (e.c_name(), e.code())),
            |n| n.starts_with("PARLOPS_PARTITION_"),
        ),
        (
            "Method",
            rows(Method::ALL, |e| (e.c_name(), e.code())),
            |n| n.starts_with("PARLOPS_METHOD_"),
        ),
        (
            "Reason",
            rows(Reason::ALL, |e| (e.c_name(), e.code())),
            |n| {
                n == "PARLOPS_ITERATING"
                    || n.starts_with("PARLOPS_CONVERGED_")
                    || n.starts_with("PARLOPS_DIVERGED_")
            },
        ),
        (
            "Threshold",
            rows(Threshold::ALL, |e| (e.c_name(), e.code())),
            |n| n.starts_with("PARLOPS_THRESHOLD_"),
        ),
        (
            "Reference",
            rows(Reference::ALL, |e| (e.c_name(), e.code())),
            |n| n.starts_with("PARLOPS_REFERENCE_"),
        ),
        (
            "PcSide",
            rows(PcSide::ALL, |e| (e.c_name(), e.code())),
            |n| n.starts_with("PARLOPS_PC_"),
        ),
        (
            "Distribution",
            rows(Distribution::ALL, |e| (e.c_name(), e.code())),
            |n| n.starts_with("PARLOPS_RANDOM_"),
        ),
        (
            "Orthog",
            rows(Orthog::ALL, |e| (e.c_name(), e.code())),
            |n| n.starts_with("PARLOPS_ORTHOG_"),
        ),
        (
            "SumOrder",
            rows(SumOrder::ALL, |e| (e.c_name(), e.code())),
            |n| n.starts_with("PARLOPS_SUM_"),
        ),
    ]
}

#[test]
fn every_c_constant_is_pinned() {
    let header = header_constants();
    for &(name, rust, pinned) in PINNED {
        assert_eq!(
            rust, pinned,
            "{name} is {rust} in src/capi; it is pinned to {pinned}"
        );
        assert_eq!(
            header.get(name),
            Some(&pinned),
            "{name} in include/parlops.h (make header)"
        );
    }
    let in_tables: Vec<&str> = tables()
        .into_iter()
        .flat_map(|(_, rows, _)| rows.into_iter().map(|(n, _)| n))
        .collect();
    for name in header.keys() {
        let versioned = name.starts_with("PARLOPS_VERSION_");
        assert!(
            versioned || PINNED.iter().any(|p| p.0 == name) || in_tables.contains(&name.as_str()),
            "{name} is in the header but neither pinned here nor in a core table"
        );
    }
    let v = |k: &str| header[k].to_string();
    assert_eq!(v("PARLOPS_VERSION_MAJOR"), env!("CARGO_PKG_VERSION_MAJOR"));
    assert_eq!(v("PARLOPS_VERSION_MINOR"), env!("CARGO_PKG_VERSION_MINOR"));
    assert_eq!(v("PARLOPS_VERSION_PATCH"), env!("CARGO_PKG_VERSION_PATCH"));
}

#[test]
fn every_table_matches_the_header() {
    let header = header_constants();
    for (table, rows, belongs) in tables() {
        for &(name, code) in &rows {
            assert_eq!(
                header.get(name),
                Some(&(code as i64)),
                "{table}: {name} = {code} in the table, not in include/parlops.h"
            );
        }
        for (name, value) in header.iter().filter(|(n, _)| belongs(n)) {
            assert!(
                rows.iter().any(|&(n, c)| n == name && c as i64 == *value),
                "{name} = {value} is in the header but has no line in the {table} table"
            );
        }
    }
}

#[test]
fn c_enums_follow_the_tables() {
    for &k in ErrorKind::ALL {
        let s = parlops_status::from(k);
        assert_eq!(
            (s as i32, format!("{s:?}")),
            (k.code(), k.c_name().to_string())
        );
        // SAFETY: `parlops_status_string` never returns NULL: every path returns a C string literal
        // or an entry of a `static` table of `CString`s, NUL-terminated and alive for the whole
        // process.
        let text = unsafe { CStr::from_ptr(parlops_status_string(k.code())) };
        assert_eq!(
            text.to_str().unwrap(),
            format!("{}: {}", k.c_name(), k.name())
        );
    }
    // SAFETY: as above: the literal "PARLOPS_OK: success", static and NUL-terminated.
    let ok = unsafe { CStr::from_ptr(parlops_status_string(0)) };
    assert_eq!(ok.to_str().unwrap(), "PARLOPS_OK: success");
    let past = ErrorKind::ALL.len() as i32 + 1;
    // SAFETY: as above: one past the last status is no status, which gives the static "unknown
    // status" literal.
    let unknown = unsafe { CStr::from_ptr(parlops_status_string(past)) };
    assert!(unknown.to_str().unwrap().starts_with("unknown status"));
    for &r in Reason::ALL {
        let c = parlops_reason::from(r);
        assert_eq!(
            (c as i32, format!("{c:?}")),
            (r.code(), r.c_name().to_string())
        );
    }
}
