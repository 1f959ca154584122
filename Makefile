# parlops — quick start (README): `make demo`, then `make test`.
#
#   make demo [N=400] [NP=2]    install what is missing, build, solve the N x N Poisson problem on NP ranks
#   make test                   everything CI checks (header, fmt, clippy, unit, 1-4 ranks, C/Fortran/CMake)
#   make install PREFIX=...     lib/, include/, lib/cmake/Parlops, lib/pkgconfig/parlops.pc, Fortran module
#   make header                 regenerate include/parlops.h and fortran/parlops.f90 (commit them)
#   make bench                  parlops next to PETSc, SLEPc, hypre and PyLops-MPI (CG, GMRES, SpMV, dot, an MFEM matrix,
#                               Krylov-Schur, GCRO-DR recycling), 1 and 2 ranks:
#                               table, build/bench.json and build/bench.svg (installs petsc-dev; not a test)
#   make bench-spmv [BENCH_N=1000]  CSR SpMV bandwidth vs STREAM triad at 1 and 2 ranks (Rust, no C API)
#   make bench-stencil [STENCIL_N=3000]  the matrix-free stencils vs their assembled CSR, 1 and 2 ranks
#   make bench-passes [PASSES_N=1000]  CG's and pipelined CG's passes timed alone and the two solvers, 1 and 2 ranks
#   make bench-repro [REPRO_N=1000]  CG in the reproducible sum order against the blocked one, 1 and 2 ranks
#   make bench-small            CG at about 1,000 and 10,000 rows per rank next to PETSc and hypre (1 and 2 ranks)
#   make bench-setup            matrix and BoomerAMG set-up next to PETSc and hypre, peak memory of a CG solve
#   make test-mpich             build and run the multi-rank tests against MPICH (separate target dir)
#   make gpu-check              device checks and bandwidth table on an NVIDIA GPU machine (tools/gpu_check.sh)
#   make gpu-bundle             build what gpu-check needs into build/gpu, for a GPU machine without registries
#   make fresh-check            make demo + make test in a clean Debian root built from Debian's packages (root)
#   make fuzz [FUZZ_CALLS=...]  the C API fuzzer for 10^6 random calls (seed printed; FUZZ_SEED=... to repeat)
SHELL := /bin/bash
.DEFAULT_GOAL := build
export PATH := $(HOME)/.cargo/bin:$(PATH)

VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
MAJOR := $(word 1,$(subst ., ,$(VERSION)))
MINOR := $(word 2,$(subst ., ,$(VERSION)))
# Below 1.0 every minor release may break the ABI, so the soname carries the minor (as cargo-c does)
SOVERSION := $(if $(filter 0,$(MAJOR)),$(MAJOR).$(MINOR),$(MAJOR))
SONAME := libparlops.so.$(SOVERSION)
PREFIX ?= /usr/local
N ?= 400
NP ?= 2
BENCH_N ?= 400
REPRO_N ?= 1000
STENCIL_N ?= 3000
PASSES_N ?= 1000
BENCH_ROUNDS ?= 5
BENCH_K ?= 100
BENCH_2D ?= 1000
BENCH_2D_LARGE ?= 2000
BENCH_3D ?= 100
BENCH_CONV ?= 710
BENCH_MFEM ?= 32
MFEM_SER = $(BUILD)/mfem/mfem/external/ser
BENCH_NP ?= 1 2
BENCH_POISSON ?= 40
BENCH_ELASTICITY ?= 8
BENCH_HEAT ?= 40
BUILD := $(CURDIR)/build
STAGE := $(BUILD)/prefix

# Open MPI by explicit name, so that an MPICH installed alongside cannot take over.
MPICC ?= mpicc.openmpi
MPIF90 ?= mpif90.openmpi
MPIEXEC ?= mpiexec.openmpi
MPI_PC ?= ompi-c
export MPICC MPIF90 MPIEXEC
# Open MPI refuses root and more ranks than cores unless told; harmless elsewhere.
export OMPI_ALLOW_RUN_AS_ROOT := 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM := 1
export OMPI_MCA_rmaps_base_oversubscribe := 1

CARGO_FLAGS := --release --locked
LIB := target/release/versioned/$(SONAME)

# A Rust benchmark of benches/ ($(1), its cargo [[bench]] name) at 1 and 2 ranks, with argument $(2).
rust_bench = @bin=$$(cargo bench --no-run --locked --message-format=json 2>/dev/null | python3 -c 'import json,sys; [print(m["executable"]) for m in map(json.loads, sys.stdin) if m.get("reason")=="compiler-artifact" and m["target"]["name"]=="$(1)" and m.get("executable")]'); \
	for np in 1 2; do $(MPIEXEC) -n $$np $$bin $(2); done

bench-spmv: deps
	$(call rust_bench,spmv,$(BENCH_N))

bench-passes: deps
	$(call rust_bench,passes,$(PASSES_N))

# the matrix-free stencils against their assembled CSR matrices (issue 36: at most 0.6x the time,
# equal products), PyLops' derivatives, Laplacians (2-D, 3-D) and gradient at about 1M points, 1 and
# 2 ranks, 7 interleaved rounds (benches/NOTES.md item 38); in make bench
bench-stencil: deps
	$(call rust_bench,stencil,$(STENCIL_N))

# the reproducible sum order's cost per CG iteration (issue 35, section 4), 1M rows, 1 and 2 ranks,
# 9 interleaved rounds of 50 iterations (benches/NOTES.md item 36); in make bench
bench-repro: deps
	$(call rust_bench,repro,$(REPRO_N) 9 50)

.PHONY: fuzz fresh-check gpu-check gpu-bundle gpu-tests kernels-check bench bench-fft bench-mdc bench-spmv bench-passes bench-stencil bench-repro bench-precond bench-eigen bench-recycle bench-many bench-small bench-setup reference mfem-hypre python-tests abi-check docs spack-check deps build header header-check lint unit mpi-tests examples test demo install stage test-mpich clean

# SKIP_DEPS=1: the dependencies come from elsewhere (a package manager: spack/packages/parlops)
# and nothing is installed or checked; FORTRAN=0 installs no Fortran module source.
SKIP_DEPS ?= 0
FORTRAN ?= 1
deps:
	@if [ "$(SKIP_DEPS)" = 1 ]; then echo "deps: SKIP_DEPS=1: the environment's MPI ($(MPICC)), Rust and hypre"; \
	else tools/deps.sh; fi

build: deps
	cargo build $(CARGO_FLAGS)
	@tools/link_shared.sh $(MPICC) $(LIB) $(SONAME)

header:
	cbindgen --config cbindgen.toml --crate parlops --output include/parlops.h
	python3 fortran/gen_module.py include/parlops.h > fortran/parlops.f90.new
	mv fortran/parlops.f90.new fortran/parlops.f90
	python3 python/gen_capi.py include/parlops.h > python/parlops/_capi.py.new
	mv python/parlops/_capi.py.new python/parlops/_capi.py

header-check: deps
	@tmp=$$(mktemp -d); \
	cbindgen --config cbindgen.toml --crate parlops --output $$tmp/parlops.h 2>/dev/null; \
	python3 fortran/gen_module.py include/parlops.h > $$tmp/parlops.f90 || { echo "fortran/gen_module.py failed (see above)"; exit 1; }; \
	diff -u include/parlops.h $$tmp/parlops.h || { echo "include/parlops.h is stale: run make header"; exit 1; }; \
	diff -u fortran/parlops.f90 $$tmp/parlops.f90 || { echo "fortran/parlops.f90 is stale: run make header"; exit 1; }; \
	python3 python/gen_capi.py include/parlops.h > $$tmp/_capi.py || { echo "python/gen_capi.py failed (see above)"; exit 1; }; \
	diff -u python/parlops/_capi.py $$tmp/_capi.py || { echo "python/parlops/_capi.py is stale: run make header"; exit 1; }; \
	rm -rf $$tmp; echo "header-check: include/parlops.h, fortran/parlops.f90 and python/parlops/_capi.py are current"

lint: deps
	cargo fmt --check
	cargo clippy $(CARGO_FLAGS) --all-targets -- -D warnings
	tools/module_graph.sh --check

# The library's own unit tests in the dev profile (overflow checks and debug assertions on; a third
# of the compile time of a second optimised build of the crate with cfg(test)), built and run while
# the optimised test programs (tests/*.rs, run by mpi-tests and gpu-tests) build beside them: the
# optimised build of the crate leaves one of two cores idle in rustc's front end, and the two
# profiles lock different directories.
unit: deps
	@mkdir -p $(BUILD); cargo test $(CARGO_FLAGS) --test '*' --no-run >$(BUILD)/test-programs.log 2>&1 & rel=$$!; \
	cargo test --locked --lib; st=$$?; \
	if wait $$rel; then tail -1 $(BUILD)/test-programs.log; else cat $(BUILD)/test-programs.log; \
	  echo "unit: the optimised test programs did not build"; st=1; fi; exit $$st

mpi-tests: deps
	tests/run_mpi_tests.sh $(MPIEXEC) $(CARGO_FLAGS)

install: build
	install -d $(DESTDIR)$(PREFIX)/lib/cmake/Parlops $(DESTDIR)$(PREFIX)/lib/pkgconfig \
	  $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/share/parlops/fortran/examples \
	  $(DESTDIR)$(PREFIX)/share/doc/parlops
	install -m 755 $(LIB) $(DESTDIR)$(PREFIX)/lib/libparlops.so.$(VERSION)
	@# stripped, with the debug information beside it behind a GNU debug link (as Debian does)
	cd $(DESTDIR)$(PREFIX)/lib && \
	  objcopy --only-keep-debug --compress-debug-sections libparlops.so.$(VERSION) libparlops.so.$(VERSION).debug && \
	  chmod 644 libparlops.so.$(VERSION).debug && \
	  strip --strip-debug --strip-unneeded --remove-section=.comment libparlops.so.$(VERSION) && \
	  objcopy --add-gnu-debuglink=libparlops.so.$(VERSION).debug libparlops.so.$(VERSION)
	install -m 644 LICENSE-MIT LICENSE-APACHE CHANGELOG.md README.md $(DESTDIR)$(PREFIX)/share/doc/parlops/
	ln -sf libparlops.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(PREFIX)/lib/libparlops.so
	@# programs linked before the soname carried the minor recorded libparlops.so.0 (0.1 only)
	@if [ "$(SOVERSION)" = 0.1 ]; then ln -sf $(SONAME) $(DESTDIR)$(PREFIX)/lib/libparlops.so.0; fi
	install -m 644 target/release/libparlops.a $(DESTDIR)$(PREFIX)/lib/libparlops.a
	strip --strip-debug $(DESTDIR)$(PREFIX)/lib/libparlops.a
	install -d $(DESTDIR)$(PREFIX)/include/parlops
	install -m 644 include/parlops.h include/parlops.hpp $(DESTDIR)$(PREFIX)/include/
	install -m 644 include/parlops/mfem.hpp include/parlops/hypre.hpp $(DESTDIR)$(PREFIX)/include/parlops/
	if [ "$(FORTRAN)" != 0 ]; then \
	  install -m 644 fortran/parlops.f90 $(DESTDIR)$(PREFIX)/share/parlops/fortran/parlops.f90 && \
	  install -m 644 fortran/examples/*.f90 $(DESTDIR)$(PREFIX)/share/parlops/fortran/examples/; fi
	sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@SONAME@|$(SONAME)|g' -e 's|@MINOR@|$(MINOR)|g' \
	  cmake/ParlopsConfig.cmake.in > $(DESTDIR)$(PREFIX)/lib/cmake/Parlops/ParlopsConfig.cmake
	sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@MAJOR@|$(MAJOR)|g' -e 's|@MINOR@|$(MINOR)|g' \
	  cmake/ParlopsConfigVersion.cmake.in > $(DESTDIR)$(PREFIX)/lib/cmake/Parlops/ParlopsConfigVersion.cmake
	sed -e 's|@PREFIX@|$(abspath $(PREFIX))|g' -e 's|@VERSION@|$(VERSION)|g' -e 's|@MPI_PC@|$(MPI_PC)|g' \
	  cmake/parlops.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/parlops.pc
	@echo "installed parlops $(VERSION) in $(PREFIX)"

# A private install under build/ that the examples and tests use, as a user's prefix would be.
stage:
	@rm -rf $(STAGE)
	@$(MAKE) --no-print-directory install PREFIX=$(STAGE)

examples: stage
	tests/examples.sh $(STAGE) $(BUILD)

# The C API fuzzer (tests/c/fuzz_capi.c), one rank, 10^6 calls (make examples runs it for 25 s).
FUZZ_CALLS ?= 1000000
fuzz: stage
	$(MPICC) -O1 -g -Wall -Wextra -Werror -Itests/c tests/c/fuzz_capi.c -I$(STAGE)/include -L$(STAGE)/lib -lparlops \
	  -Wl,-rpath,$(STAGE)/lib -lm -o $(BUILD)/fuzz_capi
	skip=$$(sed -e 's/#.*//' -e '/^ *$$/d' tests/c/fuzz_known_failures | awk '{print $$1}' | paste -sd, -); \
	timeout 3600 $(MPIEXEC) -n 1 $(BUILD)/fuzz_capi -n $(FUZZ_CALLS) $(if $(FUZZ_SEED),-s $(FUZZ_SEED)) $${skip:+-x "$$skip"}

demo: stage
	@cmake -S c_examples -B $(BUILD)/demo -DCMAKE_PREFIX_PATH=$(STAGE) -DCMAKE_BUILD_TYPE=Release \
	  -DMPI_C_COMPILER=$$(command -v $(MPICC)) >$(BUILD)/demo.cmake.log || { cat $(BUILD)/demo.cmake.log; exit 1; }
	@cmake --build $(BUILD)/demo >$(BUILD)/demo.build.log || { cat $(BUILD)/demo.build.log; exit 1; }
	$(MPIEXEC) -n $(NP) $(BUILD)/demo/poisson $(N)

# parlops next to PETSc (KSPCG, KSPGMRES, KSPFGMRES, MatMult, VecDot) and hypre (PCG) on the same
# matrices in one interleaved run per rank count (benches/versus.c: problems, method and byte floors
# in its header; the MFEM-assembled matrix is written by benches/mfem_matrix.cpp with the serial
# libmfem of tools/mfem_fetch.sh), and next to PyLops-MPI's cg and cgls (benches/pylops_cg.py, the
# Python environment of tools/pyenv.sh), then the table and the chart (tools/bench_report.py), then what keeping
# the per-phase timings on costs per CG iteration and how much of a solve they account for (benches/timing.c). Debian's PETSc is installed
# when missing; hypre comes with make demo. Figures and their history: benches/NOTES.md.
bench: stage
	@pkg-config --exists PETSc || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends petsc-dev >/dev/null; }
	$(MPICC) -O2 -Iinclude -I/usr/include/hypre benches/versus.c $$(pkg-config --cflags --libs PETSc) -lHYPRE \
	  -L$(STAGE)/lib -lparlops -Wl,-rpath,$(STAGE)/lib -lm -o $(BUILD)/versus
	tools/mfem_fetch.sh $(BUILD)
	g++ -std=c++17 -O2 benches/mfem_matrix.cpp -isystem $(MFEM_SER)/include -L$(MFEM_SER)/lib -lmfem \
	  -Wl,-rpath,$(abspath $(MFEM_SER))/lib -o $(BUILD)/mfem_matrix
	$(BUILD)/mfem_matrix $(BENCH_MFEM) 2 $(BUILD)/mfem_matrix.bin
	rm -f $(BUILD)/bench.json
	py=$$(tools/pyenv.sh $(BUILD)); for np in $(BENCH_NP); do \
	  $(MPIEXEC) -n $$np $(BUILD)/versus $(BENCH_ROUNDS) $(BENCH_K) $(BENCH_2D) $(BENCH_3D) $(BENCH_CONV) $(BUILD)/bench.json \
	    $(BUILD)/mfem_matrix.bin $(BENCH_2D_LARGE) || exit 1; \
	  PARLOPS_LIB=$(STAGE)/lib/libparlops.so $(MPIEXEC) -n $$np $$py benches/pylops_cg.py $(BENCH_2D) $(BENCH_ROUNDS) $(BENCH_K) \
	    $(BUILD)/bench.json || exit 1; \
	done
	$(MAKE) --no-print-directory bench-eigen
	$(MAKE) --no-print-directory bench-recycle
	$(MAKE) --no-print-directory bench-many
	$(MAKE) --no-print-directory bench-small
	$(MAKE) --no-print-directory bench-setup
	$(MAKE) --no-print-directory bench-repro
	$(MAKE) --no-print-directory bench-fft
	$(MAKE) --no-print-directory bench-mdc
	$(MAKE) --no-print-directory bench-stencil
	python3 tools/bench_report.py $(BUILD)/bench.json $(BUILD)/bench.svg $(BUILD)/bench.md
	$(MPICC) -O2 benches/timing.c -Iinclude -L$(STAGE)/lib -lparlops -Wl,-rpath,$(STAGE)/lib -lm -o $(BUILD)/timing_bench
	for np in $(BENCH_NP); do $(MPIEXEC) -n $$np $(BUILD)/timing_bench $(BENCH_2D) 200 $(BENCH_ROUNDS) || exit 1; done

# The distributed FFT against PyLops-MPI 0.8's MPIFFTND (mpi4py-fft on FFTW) on the same arrays
# (issue 36: at least 3x): benches/fft.py at each BENCH_NP rank count, a 128^3 complex, a 1024^2
# complex and a 128^3 real (real=True) transform over all axes, forward then adjoint, the results
# compared first; FFT_ROUNDS interleaved rounds of FFT_K pairs, medians and their ratio printed
# (JSON lines in $(BUILD)/bench_fft.json). In make bench.
FFT_ROUNDS ?= 5
FFT_K ?= 3
bench-fft: stage
	rm -f $(BUILD)/bench_fft.json
	py=$$(tools/pyenv.sh $(BUILD)); for np in $(BENCH_NP); do \
	  PARLOPS_LIB=$(STAGE)/lib/libparlops.so $(MPIEXEC) -n $$np $$py benches/fft.py $(FFT_ROUNDS) $(FFT_K) \
	    $(BUILD)/bench_fft.json || exit 1; \
	done

# The MDC (parlops_op_mdc) against PyLops-MPI 0.8's MPIMDC on PyLops-MPI's MDD tutorial in double
# precision: benches/mdc.py at each BENCH_NP rank count, a forward-plus-adjoint pair and the tutorial's
# CGLS (MDC_NITER iterations), the answers compared first; MDC_ROUNDS interleaved rounds, medians and
# their ratios printed (JSON lines in $(BUILD)/bench_mdc.json). In make bench.
MDC_ROUNDS ?= 5
MDC_K ?= 3
MDC_NITER ?= 50
bench-mdc: stage
	rm -f $(BUILD)/bench_mdc.json
	py=$$(tools/pyenv.sh $(BUILD)); for np in $(BENCH_NP); do \
	  PARLOPS_LIB=$(STAGE)/lib/libparlops.so $(MPIEXEC) -n $$np $$py benches/mdc.py $(MDC_ROUNDS) $(MDC_K) $(MDC_NITER) \
	    $(BUILD)/bench_mdc.json || exit 1; \
	done

# CG in the small-problem regime (issue 35, section 3): benches/versus.c's 2D and 3D Poisson problems
# at about 1,000 and 10,000 rows per rank (n^2 and n^3 rows, n rounded), at each BENCH_NP rank count:
# parlops' CG next to PETSc's KSPCG and hypre's PCG, SMALL_K iterations a round (fewer than a 1,000-row
# solve needs: every solver makes all of them; a solver that stops early is timed per iteration
# made), SMALL_ROUNDS interleaved rounds; tools/bench_small.py prints each CG's time per iteration
# and its ratio to PETSc's (the median of each round's own ratio). JSON: $(BUILD)/bench-small.json.
SMALL_ROUNDS ?= 15
SMALL_K ?= 50
SMALL_ROWS ?= 1000 10000
bench-small: stage
	@pkg-config --exists PETSc || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends petsc-dev >/dev/null; }
	$(MPICC) -O2 -Iinclude -I/usr/include/hypre benches/versus.c $$(pkg-config --cflags --libs PETSc) -lHYPRE \
	  -L$(STAGE)/lib -lparlops -Wl,-rpath,$(STAGE)/lib -lm -o $(BUILD)/versus
	rm -f $(BUILD)/bench-small.json
	for np in $(BENCH_NP); do for rows in $(SMALL_ROWS); do \
	  n2=$$(python3 -c "print(round(($$rows * $$np) ** 0.5))"); n3=$$(python3 -c "print(round(($$rows * $$np) ** (1 / 3)))"); \
	  $(MPIEXEC) -n $$np $(BUILD)/versus $(SMALL_ROUNDS) $(SMALL_K) $$n2 $$n3 0 $(BUILD)/bench-small.json none 0 0 \
	    > $(BUILD)/bench-small.$$np.$$rows.log 2>&1 || { cat $(BUILD)/bench-small.$$np.$$rows.log; exit 1; }; \
	done; done
	python3 tools/bench_small.py $(BUILD)/bench-small.json

# Set-up costs and memory (issue 35, section 3; benches/setup.c) on the 2D Poisson matrix of
# SETUP_N^2 rows at each BENCH_NP: the matrix from the caller's rows to its first product (parlops,
# PETSc's MatCreateMPIAIJWithArrays, hypre's IJ) and BoomerAMG's set-up through parlops against
# hypre's own, SETUP_ROUNDS interleaved rounds, with parlops asking for 2 MiB pages and without
# (PARLOPS_HUGE_PAGES=0); then the peak resident memory of a 100-iteration CG solve, parlops and
# PETSc each in a process of its own; then the messages per CG iteration at 8 oversubscribed ranks
# of about 1,000 rows (benches/mpi_count.c, a PMPI counter, through tools/bench_messages.py).
# JSON: $(BUILD)/bench-setup.json.
SETUP_N ?= 1000
SETUP_ROUNDS ?= 5
bench-setup: stage
	@pkg-config --exists PETSc || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends petsc-dev >/dev/null; }
	$(MPICC) -O2 -Iinclude -I/usr/include/hypre benches/setup.c $$(pkg-config --cflags --libs PETSc) -lHYPRE \
	  -L$(STAGE)/lib -lparlops -Wl,-rpath,$(STAGE)/lib -lm -o $(BUILD)/setup_bench
	rm -f $(BUILD)/bench-setup.json
	for np in $(BENCH_NP); do \
	  for hp in 1 0; do PARLOPS_HUGE_PAGES=$$hp $(MPIEXEC) -n $$np $(BUILD)/setup_bench time $(SETUP_ROUNDS) $(SETUP_N) \
	    $(BUILD)/bench-setup.json || exit 1; done; \
	  for lib in petsc parlops; do $(MPIEXEC) -n $$np $(BUILD)/setup_bench memory $$lib $(SETUP_N) || exit 1; done; \
	done
	$(MPICC) -O2 -shared -fPIC benches/mpi_count.c -o $(BUILD)/libmpi_count.so
	python3 tools/bench_messages.py "$(MPIEXEC)" $(BUILD)/setup_bench $(abspath $(BUILD))/libmpi_count.so 8 1000

# Preconditioners side by side (benches/precond.cpp): parlops' CG with none, Jacobi, Chebyshev, block
# Jacobi ILU(0)/IC(0) and BoomerAMG next to hypre's own PCG + BoomerAMG, at 1 and 2 ranks; then
# preconditioners that follow a changing matrix (benches/heat.cpp: 50 heat-equation steps, AMG made
# again at every step against refreshed every 10th). Fetches the MFEM wheel when it is missing.
# parlops_eig_krylov_schur next to SLEPc's Krylov-Schur (benches/eigen_versus.c: the same rows, start
# vector, basis size and tolerance; interleaved rounds, medians; both answers checked against the
# closed form). Installs Debian's slepc-dev when missing (not a test). Appends to build/bench.json.
# Grids: the 6 largest of 300^2 rows take about 4,000 products with a basis of 24 in both (at 1000^2
# the gaps shrink tenfold and a run takes hours), the 4 smallest of 100^2, and the 10 nearest a shift
# inside the spectrum of 300^2 (shift-and-invert, GMRES + BoomerAMG of A inside). One BLAS thread per
# rank, as MPI codes run (OpenBLAS would otherwise give SLEPc the idle cores). Then
# benches/eigen_beam.c: the 4 smallest and 6 largest of MFEM example 2's beam stiffness (beam-tri.mesh
# refined 3 times, tests/eigen/beam_matrices.cpp) at 1-4 ranks, split unevenly (exit 1 where the
# answers differ by more than 1e-8); then benches/eigen_memory.py: the peak memory of runs with ncv
# 16, 32 and 64 on 1M rows against ncv + 4 vectors (exit 1 beyond). EIG_INNER_RTOL changes the inner
# solves' 1e-10 in both libraries.
EIG_ROUNDS ?= 3
EIG_LARGEST ?= 300 6 24
EIG_SMALLEST ?= 100 4 24
EIG_NEAREST ?= 300 10 24
EIG_TOL ?= 1e-8
EIG_BEAM_ROUNDS ?= 5
bench-eigen: stage
	@pkg-config --exists slepc || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slepc-dev >/dev/null; }
	$(MPICC) -O2 -Iinclude benches/eigen_versus.c $$(pkg-config --cflags --libs slepc) \
	  -L$(STAGE)/lib -lparlops -Wl,-rpath,$(STAGE)/lib -lm -o $(BUILD)/eigen_versus
	for np in $(BENCH_NP); do \
	  OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(MPIEXEC) -n $$np $(BUILD)/eigen_versus $(EIG_ROUNDS) $(EIG_LARGEST) \
	    $(EIG_SMALLEST) $(EIG_TOL) $(BUILD)/bench.json $(EIG_NEAREST) || exit 1; \
	done
	tools/mfem_fetch.sh $(BUILD)
	g++ -std=c++17 -O2 tests/eigen/beam_matrices.cpp -isystem $(MFEM_SER)/include -L$(MFEM_SER)/lib -lmfem \
	  -Wl,-rpath,$(abspath $(MFEM_SER))/lib -o $(BUILD)/beam_matrices
	$(BUILD)/beam_matrices $(MFEM_SER)/data/beam-tri.mesh 3 $(BUILD)/beam_K.bin $(BUILD)/beam_M.bin
	$(MPICC) -O2 -Iinclude benches/eigen_beam.c $$(pkg-config --cflags --libs slepc) \
	  -L$(STAGE)/lib -lparlops -Wl,-rpath,$(STAGE)/lib -lm -o $(BUILD)/eigen_beam
	for np in 1 2 3 4; do \
	  OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(MPIEXEC) -n $$np $(BUILD)/eigen_beam $(EIG_BEAM_ROUNDS) $(BUILD)/beam_K.bin \
	    4 6 24 $(EIG_TOL) $(BUILD)/bench.json || exit 1; \
	done
	py=$$(tools/pyenv.sh $(BUILD)); PYTHONPATH=$(CURDIR)/python PARLOPS_LIB=$(STAGE)/lib/libparlops.so \
	  $$py benches/eigen_memory.py

# Krylov subspace recycling (benches/recycle.c): GCRO-DR(30, 15) next to GMRES(30) on 20
# convection-diffusion systems (versus.c's convdiff on 300^2 rows) whose convection drifts by 2% a
# step, each solved to 1e-8 from the previous solution with block Jacobi ILU(0) of its matrix; then
# deflated CG (k = 8) next to CG on 20 anisotropic diffusion systems drifting alike, with block Jacobi
# IC(0). Operator applications counted by parlops' own log (the products with the kept space
# included), every solve's true residual checked, interleaved rounds. Appends to build/bench.json.
RECYCLE_ROUNDS ?= 3
RECYCLE ?= 300 20 30 15 30 1e-8 0.5 ilu
RECYCLE_SPD ?= 300 20 0 8 0 1e-8 0.5 ic
bench-recycle: stage
	$(MPICC) -O2 -Iinclude benches/recycle.c -L$(STAGE)/lib -lparlops -Wl,-rpath,$(STAGE)/lib -lm -o $(BUILD)/recycle_bench
	for np in $(BENCH_NP); do \
	  $(MPIEXEC) -n $$np $(BUILD)/recycle_bench convdiff $(RECYCLE_ROUNDS) $(RECYCLE) $(BUILD)/bench.json || exit 1; \
	  $(MPIEXEC) -n $$np $(BUILD)/recycle_bench spd $(RECYCLE_ROUNDS) $(RECYCLE_SPD) $(BUILD)/bench.json || exit 1; \
	done

# Several right-hand sides (benches/many.c): block CG of MANY's k columns (parlops_solver_solve_many)
# next to k CG solves on the 2D Poisson matrix, interleaved rounds, every true residual checked.
MANY_ROUNDS ?= 3
MANY ?= 1000 8 1e-8
bench-many: stage
	$(MPICC) -O2 -Iinclude benches/many.c -L$(STAGE)/lib -lparlops -Wl,-rpath,$(STAGE)/lib -lm -o $(BUILD)/many_bench
	for np in $(BENCH_NP); do \
	  $(MPIEXEC) -n $$np $(BUILD)/many_bench $(MANY_ROUNDS) $(MANY) $(BUILD)/bench.json || exit 1; \
	done

bench-precond: stage
	tools/mfem_fetch.sh $(BUILD)
	mpicxx.openmpi -std=c++17 -O2 benches/precond.cpp -isystem /usr/include/hypre -isystem $(MFEM_SER)/include \
	  -I$(STAGE)/include -L$(STAGE)/lib -lparlops -L$(MFEM_SER)/lib -lmfem -lHYPRE \
	  -Wl,-rpath,$(abspath $(STAGE))/lib -Wl,-rpath,$(abspath $(MFEM_SER))/lib -o $(BUILD)/precond_bench
	for np in 1 2; do $(MPIEXEC) -n $$np $(BUILD)/precond_bench $(BENCH_ROUNDS) $(BENCH_POISSON) $(BENCH_ELASTICITY); done
	mpicxx.openmpi -std=c++17 -O2 benches/heat.cpp -isystem /usr/include/hypre -isystem $(MFEM_SER)/include \
	  -I$(STAGE)/include -L$(STAGE)/lib -lparlops -L$(MFEM_SER)/lib -lmfem -lHYPRE \
	  -Wl,-rpath,$(abspath $(STAGE))/lib -Wl,-rpath,$(abspath $(MFEM_SER))/lib -o $(BUILD)/heat_bench
	for np in 1 2; do $(MPIEXEC) -n $$np $(BUILD)/heat_bench 3 $(BENCH_HEAT); done

reference: stage
	tests/reference.sh $(STAGE) $(BUILD)

mfem-hypre: stage
	tests/mfem_hypre.sh $(STAGE) $(BUILD)

# The API reference (HTML) from the header's comments, into build/docs: fails on an undocumented item
# or a broken link (tools/gen_docs.py).
docs:
	python3 tools/gen_docs.py $(BUILD)/docs

# The ABI the header declares against the baseline of the last release (abi/), and the check's own
# demonstration that a removed function and a grown struct fail it (tools/abi_check.sh).
abi-check: deps
	tools/abi_check.sh check
	tools/abi_check.sh selftest

# The Spack recipe's install commands, run as they are (tools/check_spack_recipe.sh; make fresh-check
# runs it in its clean root after make test).
spack-check:
	tools/check_spack_recipe.sh

# The Python package installed with pip into a new venv, its tests at 1-4 ranks (python/).
python-tests: stage
	tests/python.sh $(STAGE) $(BUILD)

# The device test program at 1 and 2 ranks: on a machine without a GPU it says why it skips; and the
# device kernels compiled for every dtype by NVRTC (fetched into build/nvrtc: no GPU needed).
gpu-tests: deps
	tools/gpu_tests.sh $(MPIEXEC)

gpu-bundle: deps
	tools/gpu_bundle.sh

# Where cargo is, the bundle is rebuilt first (so it is never stale); a GPU machine without cargo
# uses the carried build/gpu (bash tools/gpu_check.sh works without make too).
gpu-check:
	@if command -v cargo >/dev/null; then $(MAKE) --no-print-directory gpu-bundle; fi
	tools/gpu_check.sh

# The steps in order, each timed (the budget is 20 minutes on 2 cores: the last line says where it went).
TEST_STEPS := deps header-check abi-check docs lint unit mpi-tests gpu-tests examples reference mfem-hypre python-tests
test:
	@t0=$$(date +%s); times=""; for step in $(TEST_STEPS); do s=$$(date +%s); \
	  $(MAKE) --no-print-directory $$step || { echo "make test: $$step failed"; exit 1; }; \
	  times="$$times $$step $$(( $$(date +%s) - s ))"; done; \
	echo "make test: all checks passed in $$(( $$(date +%s) - t0 )) s (seconds a step:$$times)"

# MPICH next to Open MPI: its own compiler wrappers, launcher and target directory.
test-mpich:
	@command -v mpicc.mpich >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libmpich-dev mpich >/dev/null; }
	TEST_TIMEOUT=1800 MPICC=mpicc.mpich CARGO_TARGET_DIR=$(CURDIR)/target-mpich tests/run_mpi_tests.sh mpiexec.mpich $(CARGO_FLAGS)
	MPICC=mpicc.mpich CARGO_TARGET_DIR=$(CURDIR)/target-mpich cargo build $(CARGO_FLAGS)
	ln -sf libparlops.so $(CURDIR)/target-mpich/release/$(SONAME)
	python3 tests/c/gen_collective_guard.py include/parlops.h tests/c/collective_recipes.h >$(BUILD)/collective_guard.c
	for prog in bad_input bad_input_ops bad_input_solver bad_handles nested_solve trust lifetime collective_guard; do \
	  src=tests/c/$$prog.c; [ -f $$src ] || src=$(BUILD)/$$prog.c; \
	  mpicc.mpich -Wall -Werror -Iinclude -Itests/c $$src -L$(CURDIR)/target-mpich/release -lparlops \
	    -Wl,-rpath,$(CURDIR)/target-mpich/release -lm -lpthread -o $(BUILD)/$${prog}_mpich && \
	  timeout 600 mpiexec.mpich -n 3 $(BUILD)/$${prog}_mpich || exit 1; \
	done

# The README's two commands in a clean Debian root (debootstrap), only Rust carried over: proves
# that tools/deps.sh installs everything (CI runs it after make test).
fresh-check:
	tools/fresh_check.sh

clean:
	cargo clean
	rm -rf $(BUILD) target-mpich
