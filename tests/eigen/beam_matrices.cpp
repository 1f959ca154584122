// The matrices of the eigensolver test on MFEM's example 2 beam: linear elasticity on beam-tri.mesh
// (2D, order-1 triangles, two materials: lambda = mu = 50 on attribute 1, 1 on attribute 2), the
// mesh refined uniformly `refinements` times, displacements ordered byVDIM, fixed on boundary
// attribute 1 as in example 2. The stiffness K and the mass matrix M are assembled by MFEM's
// BilinearForm (ElasticityIntegrator, VectorMassIntegrator) and the fixed degrees of freedom are
// removed (rows and columns), so that both are symmetric positive definite with no spurious
// eigenvalues from the boundary conditions (MFEM's example 12 pushes them away instead).
//
// Writes each as: int64 n, int64 nnz, int64 row pointer [n + 1], int32 columns [nnz] (sorted in each
// row), double values [nnz]. Usage: beam_matrices mesh refinements K.bin M.bin
#include <mfem.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

static void write(const mfem::SparseMatrix &A, const std::vector<int> &keep, const char *path) {
  std::vector<int> pos(A.Height(), -1);
  for (size_t k = 0; k < keep.size(); k++) pos[keep[k]] = (int)k;
  std::vector<int64_t> ptr{0};
  std::vector<int32_t> col;
  std::vector<double> val;
  for (int r : keep) {
    std::vector<std::pair<int, double>> e;
    for (int k = A.GetI()[r]; k < A.GetI()[r + 1]; k++)
      if (pos[A.GetJ()[k]] >= 0) e.push_back({pos[A.GetJ()[k]], A.GetData()[k]});
    std::sort(e.begin(), e.end());
    for (auto &[c, v] : e) col.push_back(c), val.push_back(v);
    ptr.push_back((int64_t)col.size());
  }
  FILE *f = std::fopen(path, "wb");
  if (!f) {
    std::perror(path);
    std::exit(1);
  }
  int64_t n = (int64_t)keep.size(), nnz = (int64_t)col.size();
  std::fwrite(&n, sizeof n, 1, f);
  std::fwrite(&nnz, sizeof nnz, 1, f);
  std::fwrite(ptr.data(), sizeof(int64_t), ptr.size(), f);
  std::fwrite(col.data(), sizeof(int32_t), col.size(), f);
  std::fwrite(val.data(), sizeof(double), val.size(), f);
  std::fclose(f);
}

int main(int argc, char **argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s mesh refinements K.bin M.bin\n", argv[0]);
    return 2;
  }
  mfem::Mesh mesh(argv[1], 1, 1);
  const int dim = mesh.Dimension();
  for (int l = 0; l < std::atoi(argv[2]); l++) mesh.UniformRefinement();
  mfem::H1_FECollection fec(1, dim);
  mfem::FiniteElementSpace fes(&mesh, &fec, dim, mfem::Ordering::byVDIM);
  mfem::Array<int> ess_bdr(mesh.bdr_attributes.Max()), ess;
  ess_bdr = 0;
  ess_bdr[0] = 1;
  fes.GetEssentialTrueDofs(ess_bdr, ess);
  mfem::Vector lv(mesh.attributes.Max()), mv(mesh.attributes.Max());
  lv = 1.0;
  lv(0) = 50.0;
  mv = 1.0;
  mv(0) = 50.0;
  mfem::PWConstCoefficient lambda(lv), mu(mv);
  mfem::BilinearForm a(&fes), m(&fes);
  a.AddDomainIntegrator(new mfem::ElasticityIntegrator(lambda, mu));
  a.Assemble();
  a.Finalize();
  m.AddDomainIntegrator(new mfem::VectorMassIntegrator());
  m.Assemble();
  m.Finalize();
  std::vector<char> fixed(fes.GetTrueVSize(), 0);
  for (int i = 0; i < ess.Size(); i++) fixed[ess[i]] = 1;
  std::vector<int> keep;
  for (int i = 0; i < fes.GetTrueVSize(); i++)
    if (!fixed[i]) keep.push_back(i);
  write(a.SpMat(), keep, argv[3]);
  write(m.SpMat(), keep, argv[4]);
  std::printf("beam_matrices: %s refined %s times: %d elements, %zu free of %d degrees of freedom\n", argv[1], argv[2],
              mesh.GetNE(), keep.size(), fes.GetTrueVSize());
  return 0;
}
