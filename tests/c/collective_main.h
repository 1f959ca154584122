/* main() of the one-rank-differs guard (after the generated runners). Usage: collective_guard [-f FUNCTION] */
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  for (int i = 1; i + 1 < argc; i++)
    if (strcmp(argv[i], "-f") == 0) only_fn = argv[i + 1];
  signal(SIGALRM, on_alarm);
  signal(SIGSEGV, on_crash);
  signal(SIGABRT, on_crash);
  signal(SIGBUS, on_crash);
  signal(SIGFPE, on_crash);
  alarm(120);
  make_world();
  int nfn = 0;
  for (size_t i = 0; i < sizeof runners / sizeof *runners; i++) {
    if (only_fn && strcmp(only_fn, runner_names[i]) != 0) continue;
    runners[i]();
    nfn++;
  }
  alarm(0);
  long all_failed = 0;
  MPI_Allreduce(&failed, &all_failed, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0)
    printf("collective_guard (%d ranks, %d collective functions, %ld cases, of which %ld lifetime cases, %ld reaching a "
           "callback): %ld passed, %ld failed\n",
           size_, nfn, cases, lt_cases, lt_reached, passed, all_failed);
  MPI_Finalize();
  return all_failed != 0;
}
