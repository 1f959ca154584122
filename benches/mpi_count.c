/* A PMPI counter for `make bench-setup`'s message counts (issue 35, section 3): loaded with
 * LD_PRELOAD into a run, it counts each rank's point-to-point messages sent (MPI_Send, MPI_Isend,
 * MPI_Sendrecv, MPI_Ssend, MPI_Rsend), persistent requests started (MPI_Start, MPI_Startall: sends
 * and receives alike, as PETSc's scatters use them), receives posted (MPI_Recv, MPI_Irecv) and the
 * reductions it takes part in (MPI_Allreduce, MPI_Iallreduce; MPI_Reduce and MPI_Bcast as others),
 * and prints them at MPI_Finalize, one line per rank: "mpi_count rank R: S sends, P starts, V
 * receives, A allreduces, O other collectives". Counting through the profiling interface sees
 * every call a library makes, whatever it is (parlops, PETSc, hypre). */
#include <mpi.h>
#include <stdio.h>

static long sends, starts, recvs, allreduces, others;

int MPI_Send(const void *b, int c, MPI_Datatype t, int d, int tag, MPI_Comm comm) {
  sends++;
  return PMPI_Send(b, c, t, d, tag, comm);
}
int MPI_Ssend(const void *b, int c, MPI_Datatype t, int d, int tag, MPI_Comm comm) {
  sends++;
  return PMPI_Ssend(b, c, t, d, tag, comm);
}
int MPI_Rsend(const void *b, int c, MPI_Datatype t, int d, int tag, MPI_Comm comm) {
  sends++;
  return PMPI_Rsend(b, c, t, d, tag, comm);
}
int MPI_Isend(const void *b, int c, MPI_Datatype t, int d, int tag, MPI_Comm comm, MPI_Request *r) {
  sends++;
  return PMPI_Isend(b, c, t, d, tag, comm, r);
}
int MPI_Sendrecv(const void *sb, int sc, MPI_Datatype st, int d, int stag, void *rb, int rc, MPI_Datatype rt, int s,
                 int rtag, MPI_Comm comm, MPI_Status *status) {
  sends++;
  return PMPI_Sendrecv(sb, sc, st, d, stag, rb, rc, rt, s, rtag, comm, status);
}
int MPI_Start(MPI_Request *r) {
  starts++;
  return PMPI_Start(r);
}
int MPI_Startall(int n, MPI_Request r[]) {
  starts += n;
  return PMPI_Startall(n, r);
}
int MPI_Recv(void *b, int c, MPI_Datatype t, int s, int tag, MPI_Comm comm, MPI_Status *st) {
  recvs++;
  return PMPI_Recv(b, c, t, s, tag, comm, st);
}
int MPI_Irecv(void *b, int c, MPI_Datatype t, int s, int tag, MPI_Comm comm, MPI_Request *r) {
  recvs++;
  return PMPI_Irecv(b, c, t, s, tag, comm, r);
}
int MPI_Allreduce(const void *s, void *r, int c, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
  allreduces++;
  return PMPI_Allreduce(s, r, c, t, op, comm);
}
int MPI_Iallreduce(const void *s, void *r, int c, MPI_Datatype t, MPI_Op op, MPI_Comm comm, MPI_Request *q) {
  allreduces++;
  return PMPI_Iallreduce(s, r, c, t, op, comm, q);
}
int MPI_Reduce(const void *s, void *r, int c, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm) {
  others++;
  return PMPI_Reduce(s, r, c, t, op, root, comm);
}
int MPI_Bcast(void *b, int c, MPI_Datatype t, int root, MPI_Comm comm) {
  others++;
  return PMPI_Bcast(b, c, t, root, comm);
}
int MPI_Finalize(void) {
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fprintf(stderr, "mpi_count rank %d: %ld sends, %ld starts, %ld receives, %ld allreduces, %ld other collectives\n",
          rank, sends, starts, recvs, allreduces, others);
  return PMPI_Finalize();
}
