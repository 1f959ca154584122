/* AMS and ADS on hostile inputs: every combination of small sizes (1, 3, 8 rows or columns), matrix
 * contents (a diagonal, a diagonal with an empty row, an empty matrix, a dense one, a gradient-like
 * +-1 pattern), coordinates or interpolations (whole or by component, with the matching cycle and
 * with the other one), Poisson matrices, 2 or 3 dimensions. What hypre would crash on must be refused
 * before it sees it; whatever is made must apply. Each call must return the same status on every
 * rank, and the process must neither crash nor hang. (Without hypre, every call fails alike with
 * PARLOPS_ERR_NOT_SUPPORTED.) Prints "hypre_shapes (N ranks): P passed, F failed". */
#include <stdint.h>
#include <stdlib.h>

#include "expect.h"

static parlops_comm *comm;

/* An r x c CSR operator (uneven rows and columns by PARLOPS_DECIDE) of one kind:
 * 0 diagonal, 1 diagonal without row 0, 2 empty, 3 dense, 4 a gradient-like pattern (-1, +1). */
static parlops_op *csr(int64_t r, int64_t c, int kind) {
  parlops_layout *lr = NULL, *lc = NULL;
  parlops_layout_create(comm, PARLOPS_PARTITION_SCATTER, r, PARLOPS_DECIDE, &lr);
  parlops_layout_create(comm, PARLOPS_PARTITION_SCATTER, c, PARLOPS_DECIDE, &lc);
  int64_t lo = 0, len = 0;
  parlops_layout_local_range(lr, &lo, &len);
  int64_t *ptr = calloc((size_t)len + 1, sizeof *ptr), *idx = calloc((size_t)(len * (c + 2) + 1), sizeof *idx);
  double *val = calloc((size_t)(len * (c + 2) + 1), sizeof *val);
  int64_t nnz = 0;
  for (int64_t k = 0; k < len; k++) {
    int64_t i = lo + k;
    if ((kind == 0 || (kind == 1 && i > 0)) && i < c) {
      idx[nnz] = i;
      val[nnz++] = 2.0;
    } else if (kind == 3) {
      for (int64_t j = 0; j < c; j++) {
        idx[nnz] = j;
        val[nnz++] = (double)((i * 7 + j * 3) % 5) - 2.0;
      }
    } else if (kind == 4) {
      int64_t a = i % c, b = (i + 1) % c;
      if (b < a) {
        int64_t t = a;
        a = b;
        b = t;
      }
      idx[nnz] = a;
      val[nnz++] = -1.0;
      if (b != a) {
        idx[nnz] = b;
        val[nnz++] = 1.0;
      }
    }
    ptr[k + 1] = nnz;
  }
  parlops_op *o = NULL;
  parlops_status st = parlops_op_create_csr(lr, lc, PARLOPS_F64, PARLOPS_INDEX_I64, ptr, idx, val, &o);
  same_everywhere("a test matrix", st, PARLOPS_OK);
  free(ptr);
  free(idx);
  free(val);
  parlops_layout_destroy(&lr);
  parlops_layout_destroy(&lc);
  return o;
}

/* The vertex count on this rank of a layout of n (as PARLOPS_DECIDE splits it). */
static int64_t local_of(int64_t n) {
  parlops_layout *l = NULL;
  parlops_layout_create(comm, PARLOPS_PARTITION_SCATTER, n, PARLOPS_DECIDE, &l);
  int64_t lo = 0, len = 0;
  parlops_layout_local_range(l, &lo, &len);
  parlops_layout_destroy(&l);
  return len;
}

static long made = 0, tried = 0;

/* The call's status alike on every rank; what was made applies (alike) and is destroyed. */
static void settle(const char *what, parlops_status st, parlops_op **m) {
  tried++;
  int mine = (int)st, lo = 0, hi = 0;
  MPI_Allreduce(&mine, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&mine, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  expect(what, lo == hi ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
  if (st != PARLOPS_OK) return;
  made++;
  parlops_vec *x = NULL, *y = NULL;
  parlops_op_create_vecs(*m, &x, &y);
  parlops_vec_fill(x, PARLOPS_REAL(1.0));
  same_everywhere(what, parlops_op_apply(*m, x, y), PARLOPS_OK);
  parlops_vec_destroy(&x);
  parlops_vec_destroy(&y);
  parlops_op_destroy(m);
}

int main(int argc, char **argv) {
  signal(SIGALRM, on_alarm);
  alarm(60);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  EXPECT(parlops_comm_create(MPI_COMM_WORLD, &comm), PARLOPS_OK, NULL);
  static double coords[3 * 64];
  for (int i = 0; i < 3 * 64; i++) coords[i] = (double)(i * 37 % 11) * 0.1;
  const int sizes[] = {1, 3, 8};
  char what[200];
  /* AMS: A (n x n), G (n x nv), coordinates, the interpolations whole or by component, the cycles,
   * the Poisson matrices */
  for (int ni = 0; ni < 3; ni++)
    for (int vi = 0; vi < 3; vi++)
      for (int ak = 0; ak < 5; ak++)
        for (int gk = 0; gk < 5; gk++)
          for (int mode = 0; mode < 6; mode++)
            for (int dim = 2; dim <= 3; dim++) {
              int64_t n = sizes[ni], nv = sizes[vi];
              parlops_op *A = csr(n, n, ak), *G = csr(n, nv, gk), *M = NULL;
              parlops_op *P[3] = {csr(n, nv, 3), csr(n, nv, 0), csr(n, nv, 4)}, *P1 = csr(n, dim * nv, 3);
              parlops_op *K = csr(nv, nv, ak);
              const parlops_op *pis[3] = {P[0], P[1], P[2]}, *pi1[1] = {P1};
              parlops_hypre_options *o = NULL;
              parlops_hypre_options_create(PARLOPS_HYPRE_AMS, &o);
              /* modes: 0 coordinates; 1 components (cycle 13); 2 whole (cycle 1); 3 coordinates and
               * Poisson matrices; 4 beta = 0; 5 whole with cycle 13 (refused) */
              if (mode == 2) parlops_hypre_options_set_int(o, "CycleType", 1);
              if (mode == 4) parlops_hypre_options_set_int(o, "BetaPoissonZero", 1);
              int npi = mode == 1 ? dim : (mode == 2 || mode == 5) ? 1 : 0;
              int64_t nc = npi ? 0 : dim * local_of(nv);
              snprintf(what, sizeof what, "AMS n=%ld nv=%ld A kind %d G kind %d mode %d dim %d", (long)n, (long)nv, ak, gk,
                       mode, dim);
              current = what;
              parlops_status st = parlops_op_create_ams(A, G, dim, nc, nc ? coords : NULL, npi, npi == 1 ? pi1 : pis,
                                                        mode == 3 ? K : NULL, mode == 3 ? K : NULL, o, &M);
              settle(what, st, &M);
              if (mode == 5) expect("whole interpolations with a component cycle: refused", st,
                                    st == PARLOPS_ERR_NOT_SUPPORTED ? st : PARLOPS_ERR_INVALID_ARGUMENT, NULL);
              parlops_hypre_options_destroy(&o);
              parlops_op *all[] = {A, G, P[0], P[1], P[2], P1, K};
              for (int i = 0; i < 7; i++) parlops_op_destroy(&all[i]);
            }
  /* ADS: A (nf x nf), C (nf x ne), G (ne x nv), coordinates or the interpolations, the cycles */
  for (int fi = 0; fi < 3; fi++)
    for (int ei = 0; ei < 3; ei++)
      for (int vi = 0; vi < 3; vi++)
        for (int ak = 0; ak < 5; ak += 2)
          for (int ck = 0; ck < 5; ck++)
            for (int gk = 0; gk < 5; gk++)
              for (int mode = 0; mode < 4; mode++) {
                int64_t nf = sizes[fi], ne = sizes[ei], nv = sizes[vi];
                parlops_op *A = csr(nf, nf, ak), *C = csr(nf, ne, ck), *G = csr(ne, nv, gk), *M = NULL;
                parlops_op *P[6] = {csr(nf, nv, 3), csr(nf, nv, 0), csr(nf, nv, 4),
                                    csr(ne, nv, 3), csr(ne, nv, 0), csr(ne, nv, 4)};
                parlops_op *W[2] = {csr(nf, 3 * nv, 3), csr(ne, 3 * nv, 4)};
                const parlops_op *pis[6] = {P[0], P[1], P[2], P[3], P[4], P[5]}, *pw[2] = {W[0], W[1]};
                parlops_hypre_options *o = NULL;
                parlops_hypre_options_create(PARLOPS_HYPRE_ADS, &o);
                /* modes: 0 coordinates; 1 components; 2 whole (cycles 1); 3 coordinates with the
                 * cycles disagreeing (refused) */
                if (mode == 2) {
                  parlops_hypre_options_set_int(o, "CycleType", 1);
                  parlops_hypre_options_set_int(o, "AMSCycleType", 1);
                }
                if (mode == 3) parlops_hypre_options_set_int(o, "AMSCycleType", 1);
                int npi = mode == 1 ? 6 : mode == 2 ? 2 : 0;
                int64_t nc = npi ? 0 : 3 * local_of(nv);
                snprintf(what, sizeof what, "ADS nf=%ld ne=%ld nv=%ld kinds %d %d %d mode %d", (long)nf, (long)ne, (long)nv,
                         ak, ck, gk, mode);
                current = what;
                parlops_status st =
                    parlops_op_create_ads(A, C, G, nc, nc ? coords : NULL, npi, npi == 2 ? pw : pis, o, &M);
                settle(what, st, &M);
                if (mode == 3) expect("ADS cycles that disagree: refused", st,
                                      st == PARLOPS_ERR_NOT_SUPPORTED ? st : PARLOPS_ERR_INVALID_ARGUMENT, NULL);
                parlops_hypre_options_destroy(&o);
                parlops_op *all[] = {A, C, G, P[0], P[1], P[2], P[3], P[4], P[5], W[0], W[1]};
                for (int i = 0; i < 11; i++) parlops_op_destroy(&all[i]);
              }
  parlops_comm_destroy(&comm);
  int tot[2] = {passed, failed}, sum[2];
  MPI_Allreduce(tot, sum, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0)
    printf("hypre_shapes (%d ranks): %ld AMS/ADS calls, %ld made and applied; %d passed, %d failed\n", size_, tried, made,
           sum[0], sum[1]);
  MPI_Finalize();
  return sum[1] ? 1 : 0;
}
