/* Shared by the bad-input programs: expect a status (and a word of the message), per-case alarm. */
#ifndef PARLOPS_TEST_EXPECT_H
#define PARLOPS_TEST_EXPECT_H
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>
#include <parlops.h>

static int rank_ = 0, size_ = 1, passed = 0, failed = 0;
static const char *current = "";

static void on_alarm(int sig) {
  (void)sig;
  fprintf(stderr, "rank %d: TIMEOUT in case: %s\n", rank_, current);
  _exit(3);
}

/* Expect status `want` and, when `needle` is not NULL, a message containing it. */
static void expect(const char *name, parlops_status got, parlops_status want, const char *needle) {
  current = name;
  const char *msg = parlops_last_error();
  int ok = got == want && msg != NULL && (needle == NULL || got == PARLOPS_OK || strstr(msg, needle) != NULL);
  if (ok) {
    passed++;
  } else {
    failed++;
    fprintf(stderr, "rank %d: FAILED %s: got %d (%s), wanted %d; message: %s\n", rank_, name, (int)got,
            parlops_status_string(got), (int)want, msg ? msg : "(null)");
  }
  alarm(30);
}

#define EXPECT(call, want, needle) expect(#call, (call), (want), (needle))

/* Every rank got `got`, and it is `want` (one check per rank; collective over MPI_COMM_WORLD). */
static inline void same_everywhere(const char *name, parlops_status got, parlops_status want) {
  int mine = (int)got, lo_ = 0, hi_ = 0;
  MPI_Allreduce(&mine, &lo_, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&mine, &hi_, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  char buf[300];
  snprintf(buf, sizeof buf, "%s: status %d on every rank (ranks gave %d..%d)", name, (int)want, lo_, hi_);
  expect(buf, lo_ == hi_ && got == want ? PARLOPS_OK : PARLOPS_ERR_INTERNAL, PARLOPS_OK, NULL);
}

#endif
