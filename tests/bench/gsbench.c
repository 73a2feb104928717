/* gsbench.c - times one phase of reading a dump, for tests/bench/run.sh.
 *
 * One phase per process, so that the peak resident set size the kernel
 * reports (getrusage) belongs to that phase alone:
 *   read      the reader only: parse every record
 *   validate  reader + validator (gs_validate_reader)
 *   graph     gs_graph_load of every section, then reachability
 * The result is one line of key=value pairs on standard output, made to be
 * read by scripts; run.sh turns it into the report. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gs_error.h"
#include "gs_graph.h"
#include "gs_reader.h"
#include "gs_validate.h"

#define BENCH_PROGRAM "gcsnap-bench"
#define BENCH_SHOWN_DIAGS 5

typedef struct bench_run {
  const char *path;
  int fd;
  uint64_t bytes;
  double start;
  double cpu_start;             /* bench_thread_cpu() when timing started */
} bench_run;

static double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Peak resident set size of this process, in KiB. */
static long bench_maxrss_kb(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return -1;
#ifdef __APPLE__
  return ru.ru_maxrss / 1024;    /* bytes there, KiB on Linux and the BSDs */
#else
  return ru.ru_maxrss;
#endif
}

/* Processor time of the calling thread: the phase's critical path when
 * the parsing runs on workers, and a figure a busy machine disturbs less
 * than the wall clock. */
static double bench_thread_cpu(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void bench_report(const bench_run *b, const char *phase, double seconds) {
  double mbps = seconds > 0 ? (double)b->bytes / 1e6 / seconds : 0;
  printf("phase=%s bytes=%" PRIu64 " seconds=%.6f mb_per_s=%.1f maxrss_kb=%ld main_cpu_s=%.3f",
         phase, b->bytes, seconds, mbps, bench_maxrss_kb(), bench_thread_cpu() - b->cpu_start);
}

/* The reader as the gcsnap commands set it up for a file of records:
 * parsing ahead on the workers when it is large enough, except for the
 * read phase, which times the parser alone. */
static int bench_reader(bench_run *b, gs_reader **r, int ahead) {
  int err = gs_reader_new_fd(r, b->fd);
  if (!err && ahead && b->bytes >= GS_READER_AHEAD_MIN_BYTES) err = gs_reader_start_thread(*r);
  if (err) fprintf(stderr, BENCH_PROGRAM ": %s: %s\n", b->path, gs_strerror(err));
  return err;
}

static int bench_read(bench_run *b) {
  gs_reader *r;
  gs_record rec;
  uint64_t records = 0, bad = 0, refs = 0;
  int err;

  if (bench_reader(b, &r, 0)) return 1;
  b->start = bench_now();
  b->cpu_start = bench_thread_cpu();
  while ((err = gs_reader_next(r, &rec)) != GS_EOF) {
    if (err == GS_EFORMAT) { bad++; continue; }
    if (err) break;
    records++;
    refs += rec.nrefs;
  }
  bench_report(b, "read", bench_now() - b->start);
  printf(" records=%" PRIu64 " malformed=%" PRIu64 " refs=%" PRIu64 "\n", records, bad, refs);
  gs_reader_free(r);
  if (err != GS_EOF) {
    fprintf(stderr, BENCH_PROGRAM ": %s: %s\n", b->path, gs_strerror(err));
    return 1;
  }
  return 0;
}

static void bench_show_diag(void *ctx, const gs_diag *d) {
  unsigned *shown = ctx;
  if ((*shown)++ < BENCH_SHOWN_DIAGS)
    fprintf(stderr, "line %" PRIu64 ": %s %s: %s\n", d->line,
            gs_diag_severity(d->code) == GS_SEV_ERROR ? "error" : "warning",
            gs_diag_name(d->code), d->message);
}

static int bench_validate(bench_run *b) {
  gs_reader *r;
  gs_validate_counts counts;
  unsigned shown = 0;
  int err;

  if (bench_reader(b, &r, 1)) return 1;
  b->start = bench_now();
  b->cpu_start = bench_thread_cpu();
  err = gs_validate_reader(r, bench_show_diag, &shown, &counts);
  bench_report(b, "validate", bench_now() - b->start);
  printf(" records=%" PRIu64 " sections=%" PRIu64 " errors=%" PRIu64 " warnings=%" PRIu64 "\n",
         counts.records, counts.sections, counts.errors, counts.warnings);
  gs_reader_free(r);
  if (err) {
    fprintf(stderr, BENCH_PROGRAM ": %s: %s\n", b->path, gs_strerror(err));
    return 1;
  }
  return 0;
}

/* Per-section figures of the graph phase, summed over sections. */
typedef struct bench_graph_sum {
  uint64_t sections, objects, nodes, refs, roots, types, memory, reachable;
  uint64_t max_memory;          /* the largest section, which sets the peak */
  double reach_seconds;
} bench_graph_sum;

static int bench_reach(const gs_graph *g, bench_graph_sum *sum) {
  uint8_t *bits = calloc((size_t)g->nnodes / 8 + 1, 1);
  double t0;
  uint32_t i;
  int err;

  if (!bits) return GS_ENOMEM;
  t0 = bench_now();
  err = gs_graph_reachable(g, bits);
  sum->reach_seconds += bench_now() - t0;
  for (i = 0; i < g->nobjects && !err; i++)
    sum->reachable += (bits[i / 8] >> (i % 8)) & 1;
  free(bits);
  return err;
}

static int bench_graph(bench_run *b) {
  gs_reader *r;
  gs_graph *g;
  gs_diag d;
  bench_graph_sum sum;
  double load = 0, t0;
  int err;

  memset(&sum, 0, sizeof sum);
  if (bench_reader(b, &r, 1)) return 1;
  b->start = bench_now();
  b->cpu_start = bench_thread_cpu();
  for (;;) {
    t0 = bench_now();
    err = gs_graph_load(r, &g, &d);
    load += bench_now() - t0;
    if (err) break;
    sum.sections++;
    sum.objects += g->nobjects;
    sum.nodes += g->nnodes;
    sum.refs += g->nrefs;
    sum.roots += g->nroots;
    sum.types += g->ntypes;
    sum.memory += gs_graph_memory(g);
    if (gs_graph_memory(g) > sum.max_memory) sum.max_memory = gs_graph_memory(g);
    err = bench_reach(g, &sum);
    gs_graph_free(g);
    if (err) break;
  }
  bench_report(b, "graph", load);
  printf(" sections=%" PRIu64 " objects=%" PRIu64 " nodes=%" PRIu64 " refs=%" PRIu64
         " roots=%" PRIu64 " types=%" PRIu64 " memory=%" PRIu64 " max_section_memory=%" PRIu64
         " reachable=%" PRIu64 " reach_seconds=%.6f\n",
         sum.sections, sum.objects, sum.nodes, sum.refs, sum.roots, sum.types, sum.memory,
         sum.max_memory, sum.reachable, sum.reach_seconds);
  gs_reader_free(r);
  if (err == GS_EFORMAT) {
    fprintf(stderr, BENCH_PROGRAM ": %s: line %" PRIu64 ": %s: %s\n", b->path, d.line,
            gs_diag_name(d.code), d.message);
    return 1;
  }
  if (err != GS_EOF) {
    fprintf(stderr, BENCH_PROGRAM ": %s: %s\n", b->path, gs_strerror(err));
    return 1;
  }
  return 0;
}

static int bench_usage(FILE *f, int rc) {
  fprintf(f,
    "usage: " BENCH_PROGRAM " read|validate|graph FILE\n"
    "Times one phase over FILE and prints one line of key=value figures:\n"
    "  read      parse every record (gs_reader)\n"
    "  validate  parse and validate (gs_validate_reader)\n"
    "  graph     load every section (gs_graph_load), then mark reachable objects\n"
    "Each phase should run in its own process so that maxrss_kb is its own.\n");
  return rc;
}

int main(int argc, char **argv) {
  bench_run b;
  struct stat st;
  int rc;

  if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
    return bench_usage(stdout, 0);
  if (argc != 3) return bench_usage(stderr, 2);
  memset(&b, 0, sizeof b);
  b.path = argv[2];
  b.fd = open(b.path, O_RDONLY);
  if (b.fd < 0 || fstat(b.fd, &st) != 0) {
    fprintf(stderr, BENCH_PROGRAM ": %s: %s\n", b.path, strerror(errno));
    return 1;
  }
  b.bytes = (uint64_t)st.st_size;
  if (!strcmp(argv[1], "read")) rc = bench_read(&b);
  else if (!strcmp(argv[1], "validate")) rc = bench_validate(&b);
  else if (!strcmp(argv[1], "graph")) rc = bench_graph(&b);
  else rc = bench_usage(stderr, 2);
  close(b.fd);
  return rc;
}
