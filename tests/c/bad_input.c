/* Feeds every exported function bad input and checks the status and the message, on every rank.
 * Cases marked "one rank" give the bad argument on a single rank of a collective call: every rank must
 * return an error (no hang). Each case runs under an alarm; the driver also runs the whole program
 * under `timeout`. Run at 1 and 3 ranks. Prints "bad_input: N passed, M failed" on rank 0. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <mpi.h>
#include <parlops.h>

#include "expect.h"

int main(int argc, char **argv) {
  signal(SIGALRM, on_alarm);
  alarm(30);
  EXPECT(parlops_init(&argc, &argv), PARLOPS_OK, NULL);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  int last = size_ - 1;
  int one = size_ > 1; /* one-rank cases need at least two ranks to mean anything */

  /* ---- library-wide */
  EXPECT(parlops_version(NULL, NULL, NULL), PARLOPS_OK, NULL);
  int ma = -1, mi = -1, pa = -1;
  EXPECT(parlops_version(&ma, &mi, &pa), PARLOPS_OK, NULL);
  expect("version matches header", ma == PARLOPS_VERSION_MAJOR && mi == PARLOPS_VERSION_MINOR && pa == PARLOPS_VERSION_PATCH ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  expect("status_string(999)", strstr(parlops_status_string(999), "unknown") ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  expect("status_string(-1)", strstr(parlops_status_string(-1), "unknown") ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  expect("status_string(OK)", strstr(parlops_status_string(PARLOPS_OK), "PARLOPS_OK") ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  EXPECT(parlops_config_report(NULL, NULL, 5, NULL), PARLOPS_ERR_NULL_ARGUMENT, "buf");
  size_t need = 0;
  EXPECT(parlops_config_report(NULL, NULL, 0, &need), PARLOPS_OK, NULL);
  char small[8];
  EXPECT(parlops_config_report(NULL, small, sizeof small, NULL), PARLOPS_OK, NULL);
  expect("report truncated and terminated", strlen(small) == 7 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);

  /* ---- communicators */
  parlops_comm *c = NULL;
  EXPECT(parlops_comm_create(MPI_COMM_NULL, &c), PARLOPS_ERR_INVALID_ARGUMENT, "MPI_COMM_NULL");
  EXPECT(parlops_comm_create(MPI_COMM_WORLD, NULL), PARLOPS_ERR_NULL_ARGUMENT, "out");
  if (one) EXPECT(parlops_comm_create(MPI_COMM_WORLD, rank_ == last ? NULL : &c), PARLOPS_ERR_NULL_ARGUMENT, "out");
  expect("no handle on failure", c == NULL ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  EXPECT(parlops_comm_create_f(-12345, &c), PARLOPS_ERR_INVALID_ARGUMENT, "comm");
  EXPECT(parlops_comm_create_f(MPI_Comm_c2f(MPI_COMM_WORLD), &c), PARLOPS_OK, NULL);
  EXPECT(parlops_comm_destroy(&c), PARLOPS_OK, NULL);
  expect("destroy sets NULL", c == NULL ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  EXPECT(parlops_comm_destroy(&c), PARLOPS_OK, NULL); /* NULL handle: no-op */
  EXPECT(parlops_comm_destroy(NULL), PARLOPS_ERR_NULL_ARGUMENT, "comm");
  EXPECT(parlops_comm_create(MPI_COMM_WORLD, &c), PARLOPS_OK, NULL);
  int r;
  EXPECT(parlops_comm_rank(NULL, &r), PARLOPS_ERR_NULL_ARGUMENT, "comm");
  EXPECT(parlops_comm_rank(c, NULL), PARLOPS_ERR_NULL_ARGUMENT, "rank");
  EXPECT(parlops_comm_size(NULL, &r), PARLOPS_ERR_NULL_ARGUMENT, "comm");
  EXPECT(parlops_comm_size(c, NULL), PARLOPS_ERR_NULL_ARGUMENT, "size");
  uint64_t cnt;
  EXPECT(parlops_comm_reduction_count(NULL, &cnt), PARLOPS_ERR_NULL_ARGUMENT, "comm");
  EXPECT(parlops_comm_reduction_count(c, NULL), PARLOPS_ERR_NULL_ARGUMENT, "count");

  /* ---- layouts */
  parlops_layout *l = NULL, *l2 = NULL, *lb = NULL;
  EXPECT(parlops_layout_create(NULL, PARLOPS_PARTITION_SCATTER, 10, -1, &l), PARLOPS_ERR_NULL_ARGUMENT, "comm");
  EXPECT(parlops_layout_create(c, 7, 10, -1, &l), PARLOPS_ERR_INVALID_ARGUMENT, "partition");
  EXPECT(parlops_layout_create(c, -1, 10, -1, &l), PARLOPS_ERR_INVALID_ARGUMENT, "partition");
  EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, -5, -1, &l), PARLOPS_ERR_INVALID_ARGUMENT, "-5");
  EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, 10, -7, &l), PARLOPS_ERR_INVALID_ARGUMENT, "-7");
  EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, -1, -1, &l), PARLOPS_ERR_INVALID_ARGUMENT, "both");
  EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, 1000, 3, &l), PARLOPS_ERR_SIZE_MISMATCH, "1000");
  EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_BROADCAST, 10, 3, &l), PARLOPS_ERR_SIZE_MISMATCH, "10");
  EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, 10, -1, NULL), PARLOPS_ERR_NULL_ARGUMENT, "out");
  if (one) {
    EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, rank_ == last ? 11 : 10, -1, &l),
           PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "global lengths");
    EXPECT(parlops_layout_create(c, rank_ == last ? PARLOPS_PARTITION_BROADCAST : PARLOPS_PARTITION_SCATTER, 10, -1, &l),
           PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "partitions");
    EXPECT(parlops_layout_create(c, rank_ == last ? 9 : PARLOPS_PARTITION_SCATTER, 10, -1, &l),
           PARLOPS_ERR_INVALID_ARGUMENT, NULL);
    EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, 10, -1, rank_ == 0 ? NULL : &l),
           PARLOPS_ERR_NULL_ARGUMENT, "out");
    EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, 10, rank_ == 0 ? 10 : -1, &l),
           PARLOPS_ERR_INVALID_ARGUMENT, "local length");
    EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, -1, INT64_MAX / 2 + 1, &l), PARLOPS_ERR_INVALID_ARGUMENT, "2^63");
  }
  expect("no layout on failure", l == NULL ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, 10, -1, &l), PARLOPS_OK, NULL);
  EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, 12, -1, &l2), PARLOPS_OK, NULL);
  EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_BROADCAST, 10, -1, &lb), PARLOPS_OK, NULL);
  int64_t n64;
  EXPECT(parlops_layout_global_len(NULL, &n64), PARLOPS_ERR_NULL_ARGUMENT, "layout");
  EXPECT(parlops_layout_global_len(l, NULL), PARLOPS_ERR_NULL_ARGUMENT, "n");
  EXPECT(parlops_layout_local_range(NULL, &n64, &n64), PARLOPS_ERR_NULL_ARGUMENT, "layout");
  EXPECT(parlops_layout_rank_range(l, size_, &n64, NULL), PARLOPS_ERR_INVALID_ARGUMENT, "rank");
  EXPECT(parlops_layout_rank_range(l, -1, &n64, NULL), PARLOPS_ERR_INVALID_ARGUMENT, "-1");
  EXPECT(parlops_layout_rank_range(NULL, 0, &n64, NULL), PARLOPS_ERR_NULL_ARGUMENT, "layout");
  parlops_partition part;
  EXPECT(parlops_layout_partition(NULL, &part), PARLOPS_ERR_NULL_ARGUMENT, "layout");
  EXPECT(parlops_layout_partition(l, NULL), PARLOPS_ERR_NULL_ARGUMENT, "partition");
  bool eq;
  EXPECT(parlops_layout_equal(l, NULL, &eq), PARLOPS_ERR_NULL_ARGUMENT, "b");
  EXPECT(parlops_layout_equal(l, l2, NULL), PARLOPS_ERR_NULL_ARGUMENT, "equal");
  EXPECT(parlops_layout_equal(l, l2, &eq), PARLOPS_OK, NULL);
  expect("layouts differ", eq ? PARLOPS_ERR_INTERNAL : PARLOPS_OK, PARLOPS_OK, NULL);
  EXPECT(parlops_layout_destroy(NULL), PARLOPS_ERR_NULL_ARGUMENT, "layout");

  /* ---- vector creation */
  parlops_vec *v = NULL, *w = NULL, *f = NULL, *big = NULL, *bv = NULL;
  EXPECT(parlops_vec_create(NULL, PARLOPS_F64, PARLOPS_MEMORY_HOST, &v), PARLOPS_ERR_NULL_ARGUMENT, "layout");
  EXPECT(parlops_vec_create(l, 9, PARLOPS_MEMORY_HOST, &v), PARLOPS_ERR_INVALID_ARGUMENT, "dtype");
  EXPECT(parlops_vec_create(l, PARLOPS_F64, 5, &v), PARLOPS_ERR_INVALID_ARGUMENT, "memory");
  EXPECT(parlops_vec_create(l, PARLOPS_F64, PARLOPS_MEMORY_CUDA, &v), PARLOPS_ERR_NO_DEVICE, "CUDA");
  EXPECT(parlops_vec_create(l, PARLOPS_F64, PARLOPS_MEMORY_HOST, NULL), PARLOPS_ERR_NULL_ARGUMENT, "out");
  if (one) {
    EXPECT(parlops_vec_create(l, rank_ == last ? PARLOPS_F32 : PARLOPS_F64, PARLOPS_MEMORY_HOST, &v),
           PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "dtypes");
    EXPECT(parlops_vec_create(l, rank_ == last ? 17 : PARLOPS_F64, PARLOPS_MEMORY_HOST, &v),
           PARLOPS_ERR_INVALID_ARGUMENT, NULL);
  }
  expect("no vector on failure", v == NULL ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  int64_t start, len;
  parlops_layout_local_range(l, &start, &len);
  EXPECT(parlops_vec_create_with_array(l, PARLOPS_F64, PARLOPS_MEMORY_HOST, NULL, &v),
         len > 0 ? PARLOPS_ERR_NULL_ARGUMENT : PARLOPS_ERR_NULL_ARGUMENT, NULL);
  double arr[16];
  char *mis = (char *)arr + 1;
  EXPECT(parlops_vec_create_with_array(l, PARLOPS_F64, PARLOPS_MEMORY_HOST, mis, &v),
         len > 0 ? PARLOPS_ERR_INVALID_ARGUMENT : PARLOPS_OK, "aligned");
  parlops_vec_destroy(&v);
  EXPECT(parlops_vec_create(l, PARLOPS_F64, PARLOPS_MEMORY_HOST, &v), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_create(l, PARLOPS_F64, PARLOPS_MEMORY_HOST, &w), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_create(l, PARLOPS_F32, PARLOPS_MEMORY_HOST, &f), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_create(l2, PARLOPS_F64, PARLOPS_MEMORY_HOST, &big), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_create(lb, PARLOPS_F64, PARLOPS_MEMORY_HOST, &bv), PARLOPS_OK, NULL);

  /* ---- local vector calls */
  EXPECT(parlops_vec_place_array(NULL, arr), PARLOPS_ERR_NULL_ARGUMENT, "v");
  EXPECT(parlops_vec_place_array(v, NULL), len > 0 ? PARLOPS_ERR_NULL_ARGUMENT : PARLOPS_OK, "local_data");
  EXPECT(parlops_vec_reset_array(NULL), PARLOPS_ERR_NULL_ARGUMENT, "v");
  EXPECT(parlops_vec_reset_array(v), PARLOPS_OK, NULL);
  parlops_vec *d = NULL;
  EXPECT(parlops_vec_duplicate(NULL, &d), PARLOPS_ERR_NULL_ARGUMENT, "v");
  EXPECT(parlops_vec_duplicate(v, NULL), PARLOPS_ERR_NULL_ARGUMENT, "out");
  void *data;
  EXPECT(parlops_vec_local_array(NULL, &data, &n64), PARLOPS_ERR_NULL_ARGUMENT, "v");
  parlops_layout *lo = NULL;
  EXPECT(parlops_vec_layout(NULL, &lo), PARLOPS_ERR_NULL_ARGUMENT, "v");
  EXPECT(parlops_vec_layout(v, NULL), PARLOPS_ERR_NULL_ARGUMENT, "out");
  parlops_dtype dt;
  parlops_memory mem;
  EXPECT(parlops_vec_dtype(NULL, &dt), PARLOPS_ERR_NULL_ARGUMENT, "v");
  EXPECT(parlops_vec_dtype(v, NULL), PARLOPS_ERR_NULL_ARGUMENT, "dtype");
  EXPECT(parlops_vec_memory(NULL, &mem), PARLOPS_ERR_NULL_ARGUMENT, "v");
  EXPECT(parlops_vec_memory(v, NULL), PARLOPS_ERR_NULL_ARGUMENT, "memory");
  EXPECT(parlops_vec_copy(NULL, w), PARLOPS_ERR_NULL_ARGUMENT, "x");
  EXPECT(parlops_vec_copy(v, NULL), PARLOPS_ERR_NULL_ARGUMENT, "y");
  EXPECT(parlops_vec_copy(v, f), PARLOPS_ERR_DTYPE_MISMATCH, "PARLOPS_F32");
  EXPECT(parlops_vec_copy(v, big), PARLOPS_ERR_SIZE_MISMATCH, "12");
  EXPECT(parlops_vec_copy(v, bv), size_ > 1 ? PARLOPS_ERR_SIZE_MISMATCH : PARLOPS_ERR_LAYOUT_MISMATCH, "BROADCAST");
  EXPECT(parlops_vec_fill(NULL, PARLOPS_REAL(1)), PARLOPS_ERR_NULL_ARGUMENT, "v");
  EXPECT(parlops_vec_set_random(NULL, PARLOPS_RANDOM_GAUSSIAN, 1), PARLOPS_ERR_NULL_ARGUMENT, "v");
  EXPECT(parlops_vec_set_random(v, 3, 1), PARLOPS_ERR_INVALID_ARGUMENT, "distribution");
  EXPECT(parlops_vec_set_random(v, -1, 1), PARLOPS_ERR_INVALID_ARGUMENT, "distribution");
  EXPECT(parlops_vec_set_random(v, PARLOPS_RANDOM_RADEMACHER, 99), PARLOPS_OK, NULL);
  parlops_scalar cplx = {1.0, 2.0};
  EXPECT(parlops_vec_fill(v, cplx), PARLOPS_ERR_INVALID_ARGUMENT, "imaginary");
  EXPECT(parlops_vec_scale(NULL, PARLOPS_REAL(1)), PARLOPS_ERR_NULL_ARGUMENT, "v");
  EXPECT(parlops_vec_scale(f, cplx), PARLOPS_ERR_INVALID_ARGUMENT, "PARLOPS_F32");
  EXPECT(parlops_vec_conj(NULL), PARLOPS_ERR_NULL_ARGUMENT, "v");
  EXPECT(parlops_vec_axpy(NULL, PARLOPS_REAL(1), v), PARLOPS_ERR_NULL_ARGUMENT, "y");
  EXPECT(parlops_vec_axpy(w, PARLOPS_REAL(1), NULL), PARLOPS_ERR_NULL_ARGUMENT, "x");
  EXPECT(parlops_vec_axpy(w, PARLOPS_REAL(1), big), PARLOPS_ERR_SIZE_MISMATCH, "10");
  EXPECT(parlops_vec_axpy(w, PARLOPS_REAL(1), f), PARLOPS_ERR_DTYPE_MISMATCH, NULL);
  EXPECT(parlops_vec_axpy(w, cplx, v), PARLOPS_ERR_INVALID_ARGUMENT, "a");
  EXPECT(parlops_vec_axpy(w, PARLOPS_REAL(2), w), PARLOPS_OK, NULL); /* aliasing is allowed */
  EXPECT(parlops_vec_axpby(w, PARLOPS_REAL(1), f, PARLOPS_REAL(1)), PARLOPS_ERR_DTYPE_MISMATCH, NULL);
  EXPECT(parlops_vec_axpby(w, PARLOPS_REAL(1), v, cplx), PARLOPS_ERR_INVALID_ARGUMENT, "'b'");
  EXPECT(parlops_vec_waxpy(w, PARLOPS_REAL(1), v, big), PARLOPS_ERR_SIZE_MISMATCH, NULL);
  EXPECT(parlops_vec_waxpy(w, PARLOPS_REAL(1), NULL, v), PARLOPS_ERR_NULL_ARGUMENT, "x");
  EXPECT(parlops_vec_waxpy(NULL, PARLOPS_REAL(1), v, v), PARLOPS_ERR_NULL_ARGUMENT, "w");
  EXPECT(parlops_vec_waxpy(w, PARLOPS_REAL(1), w, w), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_pointwise_mult(w, v, f), PARLOPS_ERR_DTYPE_MISMATCH, NULL);
  EXPECT(parlops_vec_pointwise_mult(w, v, NULL), PARLOPS_ERR_NULL_ARGUMENT, "y");
  EXPECT(parlops_vec_pointwise_mult(w, w, w), PARLOPS_OK, NULL);

  /* ---- collective vector calls */
  parlops_scalar dot;
  double nrm;
  EXPECT(parlops_vec_dot(v, w, NULL), PARLOPS_ERR_NULL_ARGUMENT, "out");
  EXPECT(parlops_vec_dot(v, NULL, &dot), PARLOPS_ERR_NULL_ARGUMENT, "y");
  EXPECT(parlops_vec_dot(v, f, &dot), PARLOPS_ERR_DTYPE_MISMATCH, NULL);
  EXPECT(parlops_vec_dot(v, big, &dot), PARLOPS_ERR_SIZE_MISMATCH, NULL);
  EXPECT(parlops_vec_norm(NULL, PARLOPS_NORM_2, 0, &nrm), PARLOPS_ERR_NULL_ARGUMENT, "v");
  EXPECT(parlops_vec_norm(v, 99, 0, &nrm), PARLOPS_ERR_INVALID_ARGUMENT, "kind");
  EXPECT(parlops_vec_norm(v, PARLOPS_NORM_P, 0.0 / 0.0, &nrm), PARLOPS_ERR_INVALID_ARGUMENT, "NaN");
  EXPECT(parlops_vec_norm(v, PARLOPS_NORM_2, 0, NULL), PARLOPS_ERR_NULL_ARGUMENT, "out");
  double glob[16];
  EXPECT(parlops_vec_gather(NULL, 0, glob), PARLOPS_ERR_NULL_ARGUMENT, "v");
  EXPECT(parlops_vec_gather(v, size_, glob), PARLOPS_ERR_INVALID_ARGUMENT, "root");
  EXPECT(parlops_vec_gather(v, -2, glob), PARLOPS_ERR_INVALID_ARGUMENT, "-2");
  EXPECT(parlops_vec_gather(v, -1, NULL), PARLOPS_ERR_NULL_ARGUMENT, "global_out");
  EXPECT(parlops_vec_gather(v, 0, rank_ == 0 ? NULL : glob), PARLOPS_ERR_NULL_ARGUMENT, "global_out");
  EXPECT(parlops_vec_gather(v, 0, rank_ == 0 ? glob : NULL), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_scatter(NULL, 0, glob), PARLOPS_ERR_NULL_ARGUMENT, "v");
  EXPECT(parlops_vec_scatter(v, -1, glob), PARLOPS_ERR_INVALID_ARGUMENT, "root");
  EXPECT(parlops_vec_scatter(v, last, rank_ == last ? NULL : glob), PARLOPS_ERR_NULL_ARGUMENT, "global_in");
  /* off the root the global array is ignored, not checked: a misaligned pointer there is fine */
  void *odd = (char *)glob + 1;
  EXPECT(parlops_vec_gather(v, 0, rank_ == 0 ? (void *)glob : odd), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_scatter(v, 0, rank_ == 0 ? (void *)glob : odd), PARLOPS_OK, NULL);
  parlops_vec *rd = NULL;
  EXPECT(parlops_vec_redistribute(NULL, l, &rd), PARLOPS_ERR_NULL_ARGUMENT, "v");
  EXPECT(parlops_vec_redistribute(v, NULL, &rd), PARLOPS_ERR_NULL_ARGUMENT, "to");
  EXPECT(parlops_vec_redistribute(v, l2, &rd), PARLOPS_ERR_SIZE_MISMATCH, "12");
  EXPECT(parlops_vec_redistribute(v, lb, NULL), PARLOPS_ERR_NULL_ARGUMENT, "out");
  EXPECT(parlops_vec_assemble(NULL), PARLOPS_ERR_NULL_ARGUMENT, "v");
  EXPECT(parlops_vec_destroy(NULL), PARLOPS_ERR_NULL_ARGUMENT, "v");

  /* bad arguments on one rank only: every rank must fail, none may wait */
  if (one) {
    EXPECT(parlops_vec_dot(v, w, rank_ == last ? NULL : &dot), PARLOPS_ERR_NULL_ARGUMENT, NULL);
    EXPECT(parlops_vec_dot(v, rank_ == last ? NULL : w, &dot), PARLOPS_ERR_NULL_ARGUMENT, NULL);
    EXPECT(parlops_vec_dot(v, rank_ == last ? f : w, &dot), PARLOPS_ERR_DTYPE_MISMATCH, NULL);
    EXPECT(parlops_vec_dot(v, rank_ == 0 ? big : w, &dot), PARLOPS_ERR_SIZE_MISMATCH, NULL);
    EXPECT(parlops_vec_norm(v, rank_ == last ? 42 : PARLOPS_NORM_2, 0, &nrm), PARLOPS_ERR_INVALID_ARGUMENT, NULL);
    EXPECT(parlops_vec_norm(v, rank_ == last ? 42 : PARLOPS_NORM_INF, 0, &nrm), PARLOPS_ERR_INVALID_ARGUMENT, NULL);
    EXPECT(parlops_vec_norm(v, PARLOPS_NORM_2, 0, rank_ == 0 ? NULL : &nrm), PARLOPS_ERR_NULL_ARGUMENT, NULL);
    EXPECT(parlops_vec_norm(v, rank_ == last ? PARLOPS_NORM_INF : PARLOPS_NORM_1, 0, &nrm), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "different norms");
    EXPECT(parlops_vec_norm(bv, rank_ == last ? -3 : PARLOPS_NORM_1, 0, &nrm), PARLOPS_ERR_INVALID_ARGUMENT, NULL);
    EXPECT(parlops_vec_gather(v, rank_ == last ? 0 : 1, glob), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "roots");
    EXPECT(parlops_vec_gather(v, rank_ == last ? 99 : 0, glob), PARLOPS_ERR_INVALID_ARGUMENT, NULL);
    EXPECT(parlops_vec_scatter(v, rank_ == last ? 0 : 1, glob), PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS, "roots");
    EXPECT(parlops_vec_redistribute(v, rank_ == last ? l2 : lb, &rd), PARLOPS_ERR_SIZE_MISMATCH, NULL);
    EXPECT(parlops_vec_redistribute(v, rank_ == last ? NULL : lb, &rd), PARLOPS_ERR_NULL_ARGUMENT, NULL);
  }
  expect("no vector on failed redistribute", rd == NULL ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  {
    /* redistribute into a layout whose part on rank 0 cannot be allocated (2^40 entries): every rank
       fails with PARLOPS_ERR_OUT_OF_MEMORY, none waits in the exchange. The source wraps a reserved,
       untouched mapping on the last rank. */
    const int64_t huge = (int64_t)1 << 40;
    size_t bytes = (size_t)huge * sizeof(double);
    void *map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    int mapped = map != MAP_FAILED, all_mapped = 0;
    MPI_Allreduce(&mapped, &all_mapped, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (all_mapped) {
      parlops_layout *lfrom = NULL, *lto = NULL;
      parlops_vec *src = NULL, *dst = NULL;
      EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, -1, rank_ == last ? huge : 1, &lfrom), PARLOPS_OK, NULL);
      EXPECT(parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, -1, rank_ == 0 ? huge : 1, &lto), PARLOPS_OK, NULL);
      EXPECT(parlops_vec_create_with_array(lfrom, PARLOPS_F64, PARLOPS_MEMORY_HOST, map, &src), PARLOPS_OK, NULL);
      EXPECT(parlops_vec_redistribute(src, lto, &dst), PARLOPS_ERR_OUT_OF_MEMORY, "allocate");
      expect("no vector from a failed allocation", dst == NULL ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
      parlops_vec_destroy(&src);
      parlops_layout_destroy(&lfrom);
      parlops_layout_destroy(&lto);
    }
    if (mapped) munmap(map, bytes);
  }

  /* ---- device memory, streams, host copies, NCCL: on this machine there is no CUDA device */
  {
    parlops_vec *hv = NULL, *dv = NULL;
    EXPECT(parlops_vec_create(l, PARLOPS_F64, PARLOPS_MEMORY_HOST, &hv), PARLOPS_OK, NULL);
    int dummy_stream;
    EXPECT(parlops_vec_set_stream(NULL, &dummy_stream), PARLOPS_ERR_NULL_ARGUMENT, "v");
    EXPECT(parlops_vec_set_stream(hv, &dummy_stream), PARLOPS_ERR_MEMORY_LOCATION, "host memory");
    EXPECT(parlops_vec_set_stream(hv, NULL), PARLOPS_ERR_MEMORY_LOCATION, "host memory");
    double buf[16], back[16];
    for (int k = 0; k < 16; ++k) buf[k] = 10.0 * rank_ + k;
    EXPECT(parlops_vec_copy_from_host(NULL, buf), PARLOPS_ERR_NULL_ARGUMENT, "v");
    EXPECT(parlops_vec_copy_from_host(hv, len > 0 ? NULL : buf), len > 0 ? PARLOPS_ERR_NULL_ARGUMENT : PARLOPS_OK,
           "host_in");
    EXPECT(parlops_vec_copy_to_host(hv, len > 0 ? NULL : back), len > 0 ? PARLOPS_ERR_NULL_ARGUMENT : PARLOPS_OK,
           "host_out");
    EXPECT(parlops_vec_copy_to_host(hv, (char *)back + 1), len > 0 ? PARLOPS_ERR_INVALID_ARGUMENT : PARLOPS_OK,
           "aligned");
    EXPECT(parlops_vec_copy_from_host(hv, buf), PARLOPS_OK, NULL);
    EXPECT(parlops_vec_copy_to_host(hv, back), PARLOPS_OK, NULL);
    int same = 1;
    for (int64_t k = 0; k < len; ++k) same &= back[k] == buf[k];
    expect("copy_from_host then copy_to_host round trip", same ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    EXPECT(parlops_vec_to_memory(hv, PARLOPS_MEMORY_CUDA, &dv), PARLOPS_ERR_NO_DEVICE, "CUDA");
    EXPECT(parlops_vec_to_memory(hv, 7, &dv), PARLOPS_ERR_INVALID_ARGUMENT, "memory");
    EXPECT(parlops_vec_to_memory(hv, PARLOPS_MEMORY_HOST, NULL), PARLOPS_ERR_NULL_ARGUMENT, "out");
    EXPECT(parlops_vec_to_memory(hv, PARLOPS_MEMORY_HOST, &dv), PARLOPS_OK, NULL);
    double n1 = 0, n2 = -1;
    EXPECT(parlops_vec_norm(hv, PARLOPS_NORM_1, 0, &n1), PARLOPS_OK, NULL);
    EXPECT(parlops_vec_norm(dv, PARLOPS_NORM_1, 0, &n2), PARLOPS_OK, NULL);
    expect("to_memory copies the values", n1 == n2 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    /* a device pointer cannot be wrapped without a device; a host array as device memory neither */
    parlops_vec *wv = NULL;
    EXPECT(parlops_vec_create_with_array(l, PARLOPS_F64, PARLOPS_MEMORY_CUDA, buf, &wv), PARLOPS_ERR_NO_DEVICE,
           "CUDA");
    parlops_comm *nc = NULL;
    EXPECT(parlops_comm_create_nccl(c, -1, &nc), PARLOPS_ERR_NO_DEVICE, NULL);
    EXPECT(parlops_comm_create_nccl(c, -5, &nc), PARLOPS_ERR_INVALID_ARGUMENT, "device");
    EXPECT(parlops_comm_create_nccl(c, -1, NULL), PARLOPS_ERR_NULL_ARGUMENT, "out");
    if (one) /* a bad device on one rank only fails on every rank, with the lowest failing rank's status */
      EXPECT(parlops_comm_create_nccl(c, rank_ == last ? -3 : -1, &nc), PARLOPS_ERR_NO_DEVICE, NULL);
    EXPECT(parlops_comm_wrap_nccl(c, NULL, &nc), PARLOPS_ERR_NO_DEVICE, NULL);
    expect("no NCCL communicator on failure", nc == NULL ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
    EXPECT(parlops_vec_destroy(&hv), PARLOPS_OK, NULL);
    EXPECT(parlops_vec_destroy(&dv), PARLOPS_OK, NULL);
  }

  /* everything still works afterwards */
  EXPECT(parlops_vec_fill(v, PARLOPS_REAL(1)), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_norm(v, PARLOPS_NORM_1, 0, &nrm), PARLOPS_OK, NULL);
  expect("norm after errors", nrm == 10.0 ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);

  /* a vector kept past parlops_finalize (which ends MPI here, since parlops_init started it) */
  parlops_vec *keep = NULL;
  EXPECT(parlops_vec_duplicate(v, &keep), PARLOPS_OK, NULL);

  /* destroying the comm and layout before the vectors is safe */
  EXPECT(parlops_comm_destroy(&c), PARLOPS_OK, NULL);
  EXPECT(parlops_layout_destroy(&l), PARLOPS_OK, NULL);
  EXPECT(parlops_vec_norm(v, PARLOPS_NORM_1, 0, &nrm), PARLOPS_OK, NULL);
  parlops_vec_destroy(&v);
  parlops_vec_destroy(&w);
  parlops_vec_destroy(&f);
  parlops_vec_destroy(&big);
  parlops_vec_destroy(&bv);
  parlops_layout_destroy(&l2);
  parlops_layout_destroy(&lb);
  EXPECT(parlops_vec_destroy(&v), PARLOPS_OK, NULL);

  alarm(0);
  int tot[2] = {passed, failed}, sum[2];
  MPI_Allreduce(tot, sum, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0) printf("bad_input (%d ranks): %d passed, %d failed\n", size_, sum[0], sum[1]);
  int failed_before = failed;
  EXPECT(parlops_finalize(), PARLOPS_OK, NULL);
  int fin = 0;
  MPI_Finalized(&fin);
  expect("parlops_finalize ended the MPI that parlops_init started", fin ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  EXPECT(parlops_vec_norm(keep, PARLOPS_NORM_2, 0, &nrm), PARLOPS_ERR_INVALID_ARGUMENT, "finalised");
  EXPECT(parlops_vec_destroy(&keep), PARLOPS_OK, NULL);
  EXPECT(parlops_finalize(), PARLOPS_OK, NULL); /* second time: nothing to do */
  if (failed != failed_before) fprintf(stderr, "rank %d: %d case(s) after MPI_Finalize failed\n", rank_, failed - failed_before);
  return (sum[1] == 0 && failed == 0) ? 0 : 1;
}
