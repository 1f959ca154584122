/* Distributed vectors from C: each rank fills only its own part, then global norms, a dot product and
 * a gathered checksum. Run: mpiexec -n 2 ./vectors [global_length]
 * The Fortran example fortran/examples/vectors.f90 computes the same numbers. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>
#include <parlops.h>

#define CHECK(call)                                                                                \
  do {                                                                                             \
    parlops_status s_ = (call);                                                                    \
    if (s_ != PARLOPS_OK) {                                                                        \
      fprintf(stderr, "%s:%d: %s\n  %s\n", __FILE__, __LINE__, parlops_status_string(s_),          \
              parlops_last_error());                                                               \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                \
    }                                                                                              \
  } while (0)

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int64_t n = argc > 1 ? atoll(argv[1]) : 1000;

  parlops_comm *comm = NULL;
  CHECK(parlops_comm_create(MPI_COMM_WORLD, &comm));
  int rank, size;
  CHECK(parlops_comm_rank(comm, &rank));
  CHECK(parlops_comm_size(comm, &size));

  /* The report is collective: every rank calls it; rank 0 prints it. */
  size_t needed = 0;
  CHECK(parlops_config_report(comm, NULL, 0, &needed));
  char *report = malloc(needed);
  CHECK(parlops_config_report(comm, report, needed, NULL));
  if (rank == 0) printf("%s", report);
  free(report);

  /* Split n entries over the ranks (the first n %% P ranks get one more). */
  parlops_layout *layout = NULL;
  CHECK(parlops_layout_create(comm, PARLOPS_PARTITION_SCATTER, n, PARLOPS_DECIDE, &layout));
  int64_t start, len;
  CHECK(parlops_layout_local_range(layout, &start, &len));

  /* x is owned by parlops; y wraps this program's own array with no copy. */
  parlops_vec *x = NULL, *y = NULL;
  CHECK(parlops_vec_create(layout, PARLOPS_F64, PARLOPS_MEMORY_HOST, &x));
  double *y_local = malloc((len > 0 ? len : 1) * sizeof(double));
  CHECK(parlops_vec_create_with_array(layout, PARLOPS_F64, PARLOPS_MEMORY_HOST, y_local, &y));

  double *xl;
  CHECK(parlops_vec_local_array(x, (void **)&xl, NULL));
  for (int64_t k = 0; k < len; ++k) {
    int64_t i = start + k; /* global index */
    xl[k] = sin(0.5 * (double)i) + 1.0;
    y_local[k] = cos((double)i);
  }

  double n1, n2, ninf;
  CHECK(parlops_vec_norm(x, PARLOPS_NORM_1, 0.0, &n1));
  CHECK(parlops_vec_norm(x, PARLOPS_NORM_2, 0.0, &n2));
  CHECK(parlops_vec_norm(x, PARLOPS_NORM_INF, 0.0, &ninf));
  parlops_scalar d;
  CHECK(parlops_vec_dot(x, y, &d));
  /* y = 2 x + y, then its norm */
  CHECK(parlops_vec_axpy(y, PARLOPS_REAL(2.0), x));
  double ny;
  CHECK(parlops_vec_norm(y, PARLOPS_NORM_2, 0.0, &ny));

  /* Gather x on rank 0 and form a checksum there. */
  double *all = rank == 0 ? malloc((n > 0 ? n : 1) * sizeof(double)) : NULL;
  CHECK(parlops_vec_gather(x, 0, all));
  if (rank == 0) {
    double checksum = 0.0;
    for (int64_t i = 0; i < n; ++i) checksum += (double)(i % 7 + 1) * all[i];
    printf("ranks = %d, global length = %lld\n", size, (long long)n);
    printf("norm1(x) = %.10e\n", n1);
    printf("norm2(x) = %.10e\n", n2);
    printf("norminf(x) = %.10e\n", ninf);
    printf("dot(x, y) = %.10e\n", d.re);
    printf("norm2(2x + y) = %.10e\n", ny);
    printf("checksum = %.10e\n", checksum);
    free(all);
  }

  CHECK(parlops_vec_destroy(&x));
  CHECK(parlops_vec_destroy(&y));
  free(y_local);
  CHECK(parlops_layout_destroy(&layout));
  CHECK(parlops_comm_destroy(&comm));
  MPI_Finalize();
  return 0;
}
