# SPDX-License-Identifier: (Apache-2.0 OR MIT)
"""Spack recipe for parlops: `spack repo add <parlops checkout>/spack`, then
`spack install parlops +hypre`. The build is the README's own, `make install PREFIX=<prefix>`, with
the make variables of make_args() below; SKIP_DEPS=1 because Spack provides MPI, Rust, LLVM's
libclang (for the MPI bindings' bindgen) and hypre instead of tools/deps.sh's Debian packages.
tools/check_spack_recipe.sh runs make_args()'s commands as they are in the clean Debian root of
`make fresh-check`."""

try:  # Spack 1.x keeps the build systems in its builtin repository
    from spack_repo.builtin.build_systems.makefile import MakefilePackage
except ImportError:  # Spack 0.x exports them from spack.package
    pass
from spack.package import *  # noqa: F401,F403


def make_args(prefix, mpicc, mpiexec, mpi_name, fortran=True, hypre_dir=None):
    """The make variables of both phases (plain Python: the check runs them without Spack)."""
    pc = {"openmpi": "ompi-c", "mpich": "mpich"}.get(mpi_name, "")
    args = ["SKIP_DEPS=1", f"PREFIX={prefix}", f"MPICC={mpicc}", f"MPIEXEC={mpiexec}",
            f"MPI_PC={pc}", f"FORTRAN={1 if fortran else 0}"]
    if hypre_dir:
        args.append(f"HYPRE_DIR={hypre_dir}")  # build.rs reads hypre's integer widths from its headers
    return args


class Parlops(MakefilePackage):
    """Distributed linear operators and Krylov solvers over MPI (host memory or NVIDIA GPUs, MPI or
    NCCL), a Rust library with a stable C ABI for C, C++, Fortran and Python codes."""

    homepage = "https://github.com/parlops/parlops"
    git = "https://github.com/parlops/parlops.git"
    maintainers("parlops")
    license("MIT OR Apache-2.0")

    version("main", branch="main")
    version("0.1.0", tag="v0.1.0")

    variant("fortran", default=True, description="Install the Fortran module source and examples")
    variant("hypre", default=True, description="BoomerAMG, AMS and ADS through hypre (loaded at run time)")
    variant("mfem", default=False, description="With MFEM, for the header-only MFEM adapter")
    variant("cuda", default=False, description="Device vectors and kernels (CUDA loaded at run time)")
    variant("nccl", default=False, description="NCCL communicators for device data (loaded at run time)")
    conflicts("+nccl", when="~cuda", msg="NCCL moves device data: it needs +cuda")

    depends_on("c", type="build")
    depends_on("cxx", type="build")
    depends_on("fortran", type="build", when="+fortran")
    depends_on("gmake", type="build")
    depends_on("rust@1.85:", type="build")
    depends_on("llvm+clang", type="build")  # libclang for bindgen (rsmpi's MPI bindings)
    depends_on("python@3.8:", type="build")
    depends_on("binutils", type="build")  # objcopy and strip: the debug information beside the library
    depends_on("mpi")
    depends_on("hypre+mpi~complex~int64", when="+hypre", type=("build", "run"))
    depends_on("mfem+mpi", when="+mfem", type="run")
    depends_on("cuda", when="+cuda", type="run")
    depends_on("nccl", when="+nccl", type="run")

    def _make_args(self, prefix):
        mpi = self.spec["mpi"]
        return make_args(prefix, mpi.mpicc, join_path(mpi.prefix.bin, "mpiexec"), mpi.name,
                         fortran=self.spec.satisfies("+fortran"),
                         hypre_dir=self.spec["hypre"].prefix if self.spec.satisfies("+hypre") else None)

    def setup_build_environment(self, env):
        env.set("LIBCLANG_PATH", self.spec["llvm"].prefix.lib)
        env.set("CARGO_HOME", join_path(self.stage.path, "cargo-home"))

    def build(self, spec, prefix):
        make("build", *self._make_args(prefix))

    def install(self, spec, prefix):
        make("install", *self._make_args(prefix))

    def setup_run_environment(self, env):
        if self.spec.satisfies("+hypre"):
            libs = find_libraries("libHYPRE", self.spec["hypre"].prefix, shared=True, recursive=True)
            if libs:
                env.set("PARLOPS_HYPRE_LIBRARY", libs[0])
        for dep in ("cuda", "nccl"):
            if self.spec.satisfies(f"+{dep}"):
                for d in (self.spec[dep].prefix.lib64, self.spec[dep].prefix.lib):
                    env.prepend_path("LD_LIBRARY_PATH", d)
