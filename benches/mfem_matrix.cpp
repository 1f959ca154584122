// The MFEM-assembled matrix of `make bench`: MFEM's example 1 (Poisson, -div grad u = 1, u = 0 on the
// whole boundary) with H1 elements of order `order` on a Cartesian hexahedral mesh of ne^3 elements
// of the unit cube, assembled by MFEM's BilinearForm with its DiffusionIntegrator and reduced by
// FormLinearSystem (eliminated rows and columns keep a one on the diagonal, as in the examples).
//
// MFEM numbers the degrees of freedom by entity (vertices, then edges, faces, interiors); a split of
// those rows between ranks would give one rank all the vertices. A ParMesh gives each rank a compact
// piece of the domain instead. So the rows are renumbered by the coordinates of their nodes (z, then
// y, then x): a split by rows is then a split of the cube into slabs, and the matrix is the same
// operator (P A P^T, its entries untouched).
//
// Writes: int64 n, int64 nnz, int64 row pointer [n + 1], int32 columns [nnz] (sorted in each row),
// double values [nnz]. Usage: mfem_matrix ne order file
#include <mfem.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <vector>

int main(int argc, char **argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s ne order file\n", argv[0]);
    return 2;
  }
  const int ne = std::atoi(argv[1]), order = std::atoi(argv[2]);
  mfem::Mesh mesh = mfem::Mesh::MakeCartesian3D(ne, ne, ne, mfem::Element::HEXAHEDRON, 1.0, 1.0, 1.0);
  mfem::H1_FECollection fec(order, 3);
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
  const int n = A.Height();

  // the coordinates of every node: the identity projected on the same space, one component at a time
  std::vector<std::array<long, 3>> key(n);
  for (int c = 0; c < 3; c++) {
    mfem::FunctionCoefficient coord([c](const mfem::Vector &p) { return p(c); });
    mfem::GridFunction g(&fes);
    g.ProjectCoefficient(coord);
    // on a grid of spacing 1 / (ne order): exact integers after rounding
    for (int i = 0; i < n; i++) key[i][2 - c] = std::lround(g(i) * ne * order);
  }
  std::vector<int> perm(n), inv(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(), [&](int p, int q) { return key[p] < key[q]; });
  for (int i = 0; i < n; i++) inv[perm[i]] = i;

  const int *I = A.GetI(), *J = A.GetJ();
  const double *V = A.GetData();
  std::vector<int64_t> rp(n + 1, 0);
  for (int i = 0; i < n; i++) rp[i + 1] = rp[i] + (I[perm[i] + 1] - I[perm[i]]);
  const int64_t nnz = rp[n];
  std::vector<int32_t> ci(nnz);
  std::vector<double> va(nnz);
  std::vector<std::pair<int32_t, double>> row;
  for (int i = 0; i < n; i++) {
    const int o = perm[i];
    row.clear();
    for (int k = I[o]; k < I[o + 1]; k++) row.push_back({inv[J[k]], V[k]});
    std::sort(row.begin(), row.end());
    for (size_t k = 0; k < row.size(); k++) {
      ci[rp[i] + (int64_t)k] = row[k].first;
      va[rp[i] + (int64_t)k] = row[k].second;
    }
  }
  std::FILE *f = std::fopen(argv[3], "wb");
  if (!f) {
    std::perror(argv[3]);
    return 1;
  }
  const int64_t hdr[2] = {n, nnz};
  bool ok = std::fwrite(hdr, sizeof hdr, 1, f) == 1 && std::fwrite(rp.data(), 8, n + 1, f) == (size_t)n + 1 &&
            std::fwrite(ci.data(), 4, nnz, f) == (size_t)nnz && std::fwrite(va.data(), 8, nnz, f) == (size_t)nnz;
  ok = std::fclose(f) == 0 && ok;
  if (!ok) {
    std::fprintf(stderr, "%s: write failed\n", argv[3]);
    return 1;
  }
  std::printf("MFEM example 1 matrix: order %d on %d^3 hexahedra, %d rows, %lld non-zeros (%.1f per row), "
              "%d essential dofs -> %s\n",
              order, ne, n, (long long)nnz, (double)nnz / n, ess.Size(), argv[3]);
  return 0;
}
