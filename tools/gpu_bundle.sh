#!/usr/bin/env bash
# make gpu-bundle: everything `tools/gpu_check.sh` needs on a GPU machine that reaches no package
# registry, built here into build/gpu (carry that folder): the device test program, libparlops.so,
# the C device example linked against it, and Open MPI's runtime as Debian packages (unpacked there
# into /tmp only when that machine has no MPI of its own).
set -euo pipefail
B=build/gpu
rm -rf "$B" && mkdir -p "$B/debs"
bin=$(tools/test_binary.sh gpu_check)
[ -n "$bin" ] || { echo "gpu_bundle: the gpu_check test program was not built" >&2; exit 1; }
cargo build --release --locked
objcopy --strip-debug "$bin" "$B/gpu_check"
soname=$(readelf -d target/release/libparlops.so | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
objcopy --strip-debug target/release/libparlops.so "$B/$soname"
"${MPICC:-mpicc.openmpi}" -O2 -Wall -Werror -Iinclude c_examples/poisson_gpu.c "$B/$soname" \
  -Wl,-rpath,'$ORIGIN' -lm -o "$B/poisson_gpu"
(cd "$B/debs" && apt-get download -q openmpi-bin openmpi-common libopenmpi3 libpmix2 libhwloc15 \
  libevent-core-2.1-7 libevent-pthreads-2.1-7 libfabric1 libucx0 libibverbs1 librdmacm1 libpsm2-2 \
  libpsm-infinipath1 libnl-3-200 libnl-route-3-200 libnuma1 libmunge2 libxnvctrl0 libpciaccess0 2>/dev/null)
# hypre for the BoomerAMG/AMS/ADS checks: Debian's libHYPRE and the libraries it needs beyond the C
# and C++ runtimes and Open MPI (carried above), copied under their sonames (several are Debian
# alternatives, which unpacked packages would not set up). BLAS and LAPACK are the reference ones
# (libblas3, liblapack3: hypre barely uses them) rather than OpenBLAS, which alone would take more
# than half of what a device call carries.
H=$(ls /usr/lib/x86_64-linux-gnu/libHYPRE-*.so 2>/dev/null | head -1)
if [ -n "$H" ]; then
  mkdir -p "$B/hypre"
  refblas=/usr/lib/x86_64-linux-gnu/blas/libblas.so.3 reflapack=/usr/lib/x86_64-linux-gnu/lapack/liblapack.so.3
  cp -L "$H" "$B/hypre/"
  ldd "$H" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | while read -r name path; do
    case $name in
      libc.so*|libm.so*|libstdc++*|libgcc_s*|libmpi*|libopen-*|libhwloc*|libevent*|libudev*|libz.so*|libbz2*|liblzma*) ;;
      libopenblas*) [ -e "$refblas" ] || cp -L "$path" "$B/hypre/$name" ;;
      libblas.so.3) cp -L "$( [ -e "$refblas" ] && echo "$refblas" || echo "$path")" "$B/hypre/$name" ;;
      liblapack.so.3) cp -L "$( [ -e "$refblas" ] && [ -e "$reflapack" ] && echo "$reflapack" || echo "$path")" "$B/hypre/$name" ;;
      *) cp -L "$path" "$B/hypre/$name" ;;
    esac
  done
else
  echo "gpu_bundle: no libHYPRE here (install libhypre-dev): the AMG checks will fail on the GPU machine" >&2
fi
du -sh "$B"; ls "$B" "$B/debs" | head -40
echo "gpu_bundle: done; on the GPU machine run: bash tools/gpu_check.sh (carry build/gpu)"
