/* What the C benches share: a parlops call that must succeed (else the whole job ends), the median
 * of a round's measurements, and the JSON row tools/bench_report.py reads (the peer first, then the
 * measured: "ms_per_it" the median time, "vs_first" the paired ratio). Include after <parlops.h>. */
#ifndef PARLOPS_BENCH_UTIL_H
#define PARLOPS_BENCH_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECKP(x)                                                                      \
  do {                                                                                 \
    parlops_status st_ = (x);                                                          \
    if (st_ != PARLOPS_OK) {                                                           \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, parlops_last_error()); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                    \
    }                                                                                  \
  } while (0)

static inline int bench_cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* the median of n <= 256 values */
static inline double median(const double *v, int n) {
  double s[256];
  memcpy(s, v, (size_t)n * sizeof *s);
  qsort(s, (size_t)n, sizeof *s, bench_cmpd);
  return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

/* Two rows (the peer, then the measured) of a sequence timed over `rounds` rounds: times in seconds
 * (t[0] the peer's, t[1] the measured's, one per round), `its` each one's iterations (or operator
 * applications), `ratio` the measured / peer ratio; `extra` more JSON fields (",\"k\":v" or ""). */
static inline void bench_json_pair(const char *json, const char *prob, long long rows, int ranks, const char *names[2],
                                   const double *t[2], int rounds, const long long its[2], double ratio,
                                   const char *extra) {
  FILE *f = fopen(json, "a");
  if (!f) return;
  for (int i = 0; i < 2; i++) {
    double lo = 1e300, hi = 0;
    for (int r = 0; r < rounds; r++) lo = fmin(lo, t[i][r]), hi = fmax(hi, t[i][r]);
    fprintf(f,
            "{\"problem\":\"%s\",\"rows\":%lld,\"ranks\":%d,\"solver\":\"%s\",\"iterations\":%lld,"
            "\"ms_per_it\":%.6f,\"ms_min\":%.6f,\"ms_max\":%.6f,\"vs_first\":%.4f,\"floor_bytes_per_row\":0,"
            "\"x_floor\":0,\"rounds\":%d,\"timed_iterations\":1,\"counted\":1%s}\n",
            prob, rows, ranks, names[i], its[i], 1e3 * median(t[i], rounds), 1e3 * lo, 1e3 * hi, i ? ratio : 1.0,
            rounds, extra);
  }
  fclose(f);
}

/* N rows split as evenly as the ranks allow: this rank's first row and count, and their layout */
static inline parlops_layout *bench_rows(parlops_comm *comm, int64_t N, int64_t *start, int64_t *len) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  *len = N / size + (rank < N % size);
  *start = 0;
  MPI_Exscan(len, start, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) *start = 0;
  parlops_layout *l = NULL;
  CHECKP(parlops_layout_create(comm, PARLOPS_PARTITION_SCATTER, N, *len, &l));
  return l;
}

#endif
