/* The C baseline of bench/python_load_bench.py: what a C program pays to
 * load a whole .zt file into memory it owns. Each repetition opens the file,
 * asks every object's "data" size (zt_file_object_at + zt_object_component,
 * as a C caller does), allocates one fresh buffer (not pre-touched: page
 * faults are part of a load), reads every object with one zt_file_read_many,
 * closes. Prints the median wall seconds of REPS repetitions after
 * one warm-up, and their mean CPU seconds (user + system, every thread): on
 * a machine shared with other work the CPU time is the steadier figure. Buffers of 4 MiB and more are asked for
 * transparent huge pages, as numpy does for its arrays, so both sides pay the same page faults.
 *
 *   c_copy_read FILE REPS */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#include "ztensor.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void check(zt_status st, const char *what) {
  if (st != ZT_OK) {
    fprintf(stderr, "c_copy_read: %s: %s\n", what, zt_last_error());
    exit(1);
  }
}

static double cpu_now(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Loads the file; returns the buffer, which the caller frees after the
 * timer stops (the Python side drops its tensors after its timer too). */
static unsigned char *load(const char *path) {
  zt_file *f = NULL;
  check(zt_open(path, NULL, &f), "zt_open");
  size_t n = 0;
  check(zt_file_object_count(f, &n), "zt_file_object_count");
  zt_read_request *reqs = calloc(n ? n : 1, sizeof *reqs);
  size_t *offset = malloc((n ? n : 1) * sizeof *offset);
  if (!reqs || !offset) exit(2);
  size_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    check(zt_file_object_at(f, i, &reqs[i].object), "zt_file_object_at");
    zt_component_info ci;
    memset(&ci, 0, sizeof ci);
    ci.struct_size = sizeof ci;
    check(zt_object_component(reqs[i].object, 0, &ci), "zt_object_component");
    reqs[i].component = 0;
    reqs[i].dst_capacity = (size_t)ci.decoded_length;
    offset[i] = total;
    total += ((size_t)ci.decoded_length + 63) / 64 * 64;
  }
  size_t huge = (size_t)2 << 20;
  unsigned char *buf =
      total >= ((size_t)4 << 20) ? aligned_alloc(huge, (total + huge - 1) / huge * huge) : malloc(total ? total : 1);
  if (!buf) exit(2);
  if (total >= ((size_t)4 << 20)) madvise(buf, (total + huge - 1) / huge * huge, MADV_HUGEPAGE);
  for (size_t i = 0; i < n; ++i) reqs[i].dst = buf + offset[i];
  check(zt_file_read_many(f, reqs, n), "zt_file_read_many");
  free(offset);
  free(reqs);
  zt_close(f);
  return buf;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: c_copy_read FILE REPS\n");
    return 2;
  }
  int reps = atoi(argv[2]);
  if (reps < 1) reps = 1;
  double *t = malloc((size_t)reps * sizeof *t);
  if (!t) return 2;
  free(load(argv[1]));
  double cpu = 0;
  for (int r = 0; r < reps; ++r) {
    double c0 = cpu_now(), t0 = now();
    unsigned char *buf = load(argv[1]);
    t[r] = now() - t0;
    cpu += cpu_now() - c0;
    free(buf);
  }
  cpu /= reps;
  qsort(t, (size_t)reps, sizeof *t, by_value);
  printf("%.9f %.9f\n", t[reps / 2], cpu);
  free(t);
  return 0;
}
