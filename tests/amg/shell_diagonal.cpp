// The diagonal of a matrix-free operator (issue 32, section 5), at 1-4 ranks: an MFEM-assembled
// Poisson operator (H1 order 2 on a hexahedral cube, MFEM's DiffusionIntegrator, reduced by
// FormLinearSystem; each rank keeps an uneven share of its rows) applied two ways:
//  - as a parlops CSR operator of those rows;
//  - as a shell (parlops_op_create_shell_with_diagonal) whose forward callback is the user's own
//    product (it gathers x itself over MPI, as a matrix-free code communicates itself) and whose
//    diagonal callback writes its rows' diagonal entries.
// Jacobi-CG and Chebyshev-CG (degree 3, bounds estimated) must take the same iterations on both,
// with solutions within 1e-10 and converged true residuals; parlops_op_diagonal of both must agree
// bit for bit. Bad input fails on every rank: a NULL diagonal, a diagonal for a non-square shell, a
// diagonal callback failing on one rank inside Jacobi's set-up, a shell without a diagonal under
// Jacobi. Prints "shell_diagonal (N ranks): P passed, F failed" on rank 0.
#include "problems.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

static int passed = 0, failed = 0;

static void expect(bool ok, const std::string &what) {
  int mine = ok ? 0 : 1, any = 0;
  MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any == 0) {
    passed++;
  } else {
    failed++;
    if (!ok) std::fprintf(stderr, "rank %d: FAILED %s (%s)\n", rank_, what.c_str(), parlops_last_error());
  }
}

// Every rank got `got`, and it is `want`; with `needle`, the message names it.
static void same_everywhere(parlops_status got, parlops_status want, const char *needle, const std::string &what) {
  int mine = (int)got, lo = 0, hi = 0;
  MPI_Allreduce(&mine, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&mine, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  bool named = !needle || std::strstr(parlops_last_error(), needle) != nullptr;
  expect(lo == hi && got == want && named,
         what + ": status " + std::to_string((int)want) + " on every rank (got " + std::to_string(lo) + ".." +
             std::to_string(hi) + ")" + (needle ? std::string(", naming '") + needle + "'" : ""));
}

// MFEM's example 1 operator: -div grad on the unit cube, H1 order 2, u = 0 on the boundary.
static Rows mfem_poisson(int ne, mfem::Vector &rhs) {
  mfem::Mesh mesh = mfem::Mesh::MakeCartesian3D(ne, ne, ne, mfem::Element::HEXAHEDRON);
  mfem::H1_FECollection fec(2, 3);
  mfem::FiniteElementSpace fes(&mesh, &fec);
  mfem::Array<int> ess_bdr(mesh.bdr_attributes.Max()), ess;
  ess_bdr = 1;
  fes.GetEssentialTrueDofs(ess_bdr, ess);
  mfem::ConstantCoefficient one(1.0);
  mfem::LinearForm b(&fes);
  b.AddDomainIntegrator(new mfem::DomainLFIntegrator(one));
  b.Assemble();
  mfem::GridFunction x(&fes);
  x = 0.0;
  mfem::BilinearForm a(&fes);
  a.AddDomainIntegrator(new mfem::DiffusionIntegrator(one));
  a.Assemble();
  mfem::SparseMatrix A;
  mfem::Vector X, B;
  a.FormLinearSystem(ess, x, b, A, X, B);
  return local_rows(A, B, 1, rhs);
}

// The user's matrix-free operator: its rows, and what it needs to gather x.
struct Shell {
  const Rows *r;
  std::vector<int> counts, displs;
  std::vector<double> xg;
  int fail_rank = -1;  // the diagonal callback fails there
};

static int shell_forward(void *ctx, const void *x, void *y) {
  auto *s = static_cast<Shell *>(ctx);
  const long nl = s->r->hi - s->r->lo;
  MPI_Allgatherv(x, (int)nl, MPI_DOUBLE, s->xg.data(), s->counts.data(), s->displs.data(), MPI_DOUBLE,
                 MPI_COMM_WORLD);
  auto *yl = static_cast<double *>(y);
  for (long i = 0; i < nl; i++) {
    double acc = 0.0;
    for (long k = s->r->ptr[i]; k < s->r->ptr[i + 1]; k++) acc += s->r->val[k] * s->xg[s->r->col[k]];
    yl[i] = acc;
  }
  return 0;
}

static int shell_diagonal(void *ctx, void *d) {
  auto *s = static_cast<Shell *>(ctx);
  if (rank_ == s->fail_rank) return 5;
  const long nl = s->r->hi - s->r->lo;
  auto *dl = static_cast<double *>(d);
  for (long i = 0; i < nl; i++) {
    dl[i] = 0.0;
    for (long k = s->r->ptr[i]; k < s->r->ptr[i + 1]; k++)
      if (s->r->col[k] == s->r->lo + i) dl[i] = s->r->val[k];
  }
  return 0;
}

struct Solve {
  int iterations = -1, reason = 0;
  std::vector<double> x;
  double true_rel = INFINITY;
};

// CG on `a` with Jacobi (pc == nullptr) or the preconditioner `pc`, rtol 1e-10; the true residual
// ||b - A x|| / ||b|| recomputed with the CSR operator `csr`.
static Solve cg(const parlops_comm *c, const parlops_layout *l, const parlops_op *a, const parlops_op *pc,
                const parlops_op *csr, const mfem::Vector &rhs) {
  Solve out;
  parlops_vec *b = nullptr, *x = nullptr, *r = nullptr;
  parlops_vec_create(l, PARLOPS_F64, PARLOPS_MEMORY_HOST, &b);
  parlops_vec_create(l, PARLOPS_F64, PARLOPS_MEMORY_HOST, &x);
  parlops_vec_create(l, PARLOPS_F64, PARLOPS_MEMORY_HOST, &r);
  parlops_vec_copy_from_host(b, rhs.GetData());
  parlops_solver *s = nullptr;
  parlops_solver_create(c, PARLOPS_METHOD_CG, &s);
  parlops_solver_set_operator(s, a);
  if (pc)
    parlops_solver_set_preconditioner(s, pc);
  else
    parlops_solver_set_jacobi(s);
  parlops_solver_set_tolerances(s, 1e-10, 0.0, 1e5, 2000);
  if (parlops_solver_solve(s, b, x) == PARLOPS_OK) {
    parlops_solve_info info;
    parlops_solver_info(s, &info);
    out.iterations = (int)info.iterations;
    out.reason = (int)info.reason;
    double rn = 0, bn = 0;
    parlops_op_apply(csr, x, r);
    parlops_vec_axpby(r, PARLOPS_REAL(1.0), b, PARLOPS_REAL(-1.0));
    parlops_vec_norm(r, PARLOPS_NORM_2, 0, &rn);
    parlops_vec_norm(b, PARLOPS_NORM_2, 0, &bn);
    out.true_rel = rn / bn;
    out.x.resize((size_t)rhs.Size());
    parlops_vec_copy_to_host(x, out.x.data());
  }
  parlops_solver_destroy(&s);
  parlops_vec_destroy(&b);
  parlops_vec_destroy(&x);
  parlops_vec_destroy(&r);
  return out;
}

static void compare(const char *name, const Solve &csr, const Solve &shell) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < csr.x.size() && i < shell.x.size(); i++) {
    diff += (csr.x[i] - shell.x[i]) * (csr.x[i] - shell.x[i]);
    norm += csr.x[i] * csr.x[i];
  }
  double g[2] = {diff, norm}, t[2];
  MPI_Allreduce(g, t, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  double rel = std::sqrt(t[0] / t[1]);
  if (rank_ == 0)
    std::printf("shell_diagonal (%d ranks): %s: CSR %d its, shell %d its, solution difference %.2e, true residuals "
                "%.2e / %.2e\n",
                size_, name, csr.iterations, shell.iterations, rel, csr.true_rel, shell.true_rel);
  expect(csr.iterations > 0 && csr.iterations == shell.iterations,
         std::string(name) + ": the same iteration count on the CSR operator and the shell");
  expect(csr.reason > 0 && shell.reason > 0 && csr.true_rel <= 1e-9 && shell.true_rel <= 1e-9,
         std::string(name) + ": both converged, true residuals below 1e-9");
  expect(rel <= 1e-10, std::string(name) + ": solutions within 1e-10");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  mfem::Vector rhs;
  Rows r = mfem_poisson(6, rhs);
  const long nl = r.hi - r.lo;
  parlops_comm *c = nullptr;
  parlops_comm_create(MPI_COMM_WORLD, &c);
  parlops_layout *l = nullptr;
  parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, r.n, nl, &l);
  parlops_op *A = nullptr;
  expect(parlops_op_create_csr(l, l, PARLOPS_F64, PARLOPS_INDEX_I64, r.ptr.data(), r.col.data(), r.val.data(), &A) ==
             PARLOPS_OK,
         "the CSR operator");
  Shell sh;
  sh.r = &r;
  sh.counts.resize(size_);
  sh.displs.resize(size_);
  int mine = (int)nl;
  MPI_Allgather(&mine, 1, MPI_INT, sh.counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  for (int q = 1; q < size_; q++) sh.displs[q] = sh.displs[q - 1] + sh.counts[q - 1];
  sh.xg.resize((size_t)r.n);
  parlops_op *S = nullptr;
  expect(parlops_op_create_shell_with_diagonal(l, l, PARLOPS_F64, PARLOPS_MEMORY_HOST, &sh, shell_forward, nullptr,
                                               shell_diagonal, nullptr, &S) == PARLOPS_OK,
         "the shell with its diagonal");

  // the diagonals, bit for bit
  {
    parlops_vec *d1 = nullptr, *d2 = nullptr;
    parlops_vec_create(l, PARLOPS_F64, PARLOPS_MEMORY_HOST, &d1);
    parlops_vec_create(l, PARLOPS_F64, PARLOPS_MEMORY_HOST, &d2);
    expect(parlops_op_diagonal(A, d1) == PARLOPS_OK && parlops_op_diagonal(S, d2) == PARLOPS_OK,
           "parlops_op_diagonal of both");
    std::vector<double> h1((size_t)nl + 1), h2((size_t)nl + 1);
    parlops_vec_copy_to_host(d1, h1.data());
    parlops_vec_copy_to_host(d2, h2.data());
    expect(std::memcmp(h1.data(), h2.data(), (size_t)nl * sizeof(double)) == 0,
           "the shell's diagonal equals the CSR operator's bit for bit");
    parlops_vec_destroy(&d1);
    parlops_vec_destroy(&d2);
  }

  compare("Jacobi-CG", cg(c, l, A, nullptr, A, rhs), cg(c, l, S, nullptr, A, rhs));
  parlops_op *chA = nullptr, *chS = nullptr;
  expect(parlops_op_create_chebyshev(A, 3, 0.0, 0.0, &chA) == PARLOPS_OK &&
             parlops_op_create_chebyshev(S, 3, 0.0, 0.0, &chS) == PARLOPS_OK,
         "Chebyshev on the CSR operator and on the shell");
  compare("Chebyshev(3)-CG", cg(c, l, A, chA, A, rhs), cg(c, l, S, chS, A, rhs));
  parlops_op_destroy(&chA);
  parlops_op_destroy(&chS);

  // bad input, on every rank together
  parlops_op *Q = nullptr;
  same_everywhere(parlops_op_create_shell_with_diagonal(l, l, PARLOPS_F64, PARLOPS_MEMORY_HOST, &sh, shell_forward,
                                                        nullptr, nullptr, nullptr, &Q),
                  PARLOPS_ERR_NULL_ARGUMENT, "diagonal", "a NULL diagonal");
  parlops_layout *l2 = nullptr;
  parlops_layout_create(c, PARLOPS_PARTITION_SCATTER, r.n + 1, -1, &l2);
  same_everywhere(parlops_op_create_shell_with_diagonal(l, l2, PARLOPS_F64, PARLOPS_MEMORY_HOST, &sh, shell_forward,
                                                        nullptr, shell_diagonal, nullptr, &Q),
                  PARLOPS_ERR_INVALID_ARGUMENT, "diagonal", "a diagonal for a non-square shell");
  expect(Q == nullptr, "no operator is made by a failed call");
  sh.fail_rank = size_ - 1;
  Solve bad = cg(c, l, S, nullptr, A, rhs);
  same_everywhere(bad.iterations < 0 ? PARLOPS_ERR_CALLBACK : PARLOPS_OK, PARLOPS_ERR_CALLBACK, nullptr,
                  "the diagonal callback failing on the last rank inside Jacobi's set-up");
  {
    // the solve's own status, on every rank
    parlops_solver *s = nullptr;
    parlops_vec *b = nullptr, *x = nullptr;
    parlops_vec_create(l, PARLOPS_F64, PARLOPS_MEMORY_HOST, &b);
    parlops_vec_create(l, PARLOPS_F64, PARLOPS_MEMORY_HOST, &x);
    parlops_vec_copy_from_host(b, rhs.GetData());
    parlops_solver_create(c, PARLOPS_METHOD_CG, &s);
    parlops_solver_set_operator(s, S);
    parlops_solver_set_jacobi(s);
    same_everywhere(parlops_solver_solve(s, b, x), PARLOPS_ERR_CALLBACK, "diagonal callback",
                    "Jacobi-CG with the diagonal callback failing on the last rank");
    sh.fail_rank = -1;
    parlops_vec_fill(x, PARLOPS_REAL(0.0));
    same_everywhere(parlops_solver_solve(s, b, x), PARLOPS_OK, nullptr, "the same solve once the callback works");
    parlops_solver_destroy(&s);
    // a shell without a diagonal under Jacobi
    parlops_op *P = nullptr;
    parlops_op_create_shell(l, l, PARLOPS_F64, PARLOPS_MEMORY_HOST, &sh, shell_forward, nullptr, nullptr, &P);
    parlops_solver_create(c, PARLOPS_METHOD_CG, &s);
    parlops_solver_set_operator(s, P);
    parlops_solver_set_jacobi(s);
    same_everywhere(parlops_solver_solve(s, b, x), PARLOPS_ERR_NOT_SUPPORTED, "diagonal",
                    "Jacobi on a shell without a diagonal");
    parlops_solver_destroy(&s);
    parlops_op_destroy(&P);
    parlops_vec_destroy(&b);
    parlops_vec_destroy(&x);
  }
  parlops_layout_destroy(&l2);
  parlops_op_destroy(&S);
  parlops_op_destroy(&A);
  parlops_layout_destroy(&l);
  parlops_comm_destroy(&c);
  if (rank_ == 0) std::printf("shell_diagonal (%d ranks): %d passed, %d failed\n", size_, passed, failed);
  MPI_Finalize();
  return failed != 0;
}
