/* gsd_metrics.c - GET /metrics: the collector's counters, gauges and its
 * ingest histogram in Prometheus' text exposition format.
 *
 * Every labelled series is written from the start, at zero, so that a rate
 * over a series that has not moved yet is 0 rather than missing. The page
 * is built in a buffer of fixed size: its series are a fixed set. The
 * HTTP side, and the gauges, are the daemon's (gsd_api_devices.c). */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "gsd_metrics.h"

#define NCODES 16                       /* GS_WIRE_E_* codes, 0 to 15 */
#define WIRE_E_PROTOCOL 1               /* gs_wire.h's GS_WIRE_E_PROTOCOL */

/* Upper bounds of the ingest histogram's buckets, in seconds. */
static const double buckets[] = {0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300};
#define NBUCKETS (sizeof buckets / sizeof buckets[0])

static const char *const triggers[] = {"api", "schedule", "agent", "upload"};
#define NTRIGGERS (sizeof triggers / sizeof triggers[0])

static struct {
  uint64_t opened;
  uint64_t refused[NCODES];
  uint64_t captures[NTRIGGERS][2];      /* by trigger, then failed/stored */
  uint64_t stored, received_bytes, stored_bytes;
  uint64_t ingest_le[NBUCKETS], ingest_count;
  double ingest_sum, schedule_lag;
} m;

/* Refusal reasons as labels, by wire code; NULL for codes that never
 * refuse a connection. */
static const char *refusal_reason(unsigned code) {
  static const char *const names[NCODES] = {
    NULL, "protocol", "version", "frame_size", NULL, NULL, NULL, NULL,
    "storage", "limit", NULL, NULL, "timeout", "shutdown", "device", "auth"};
  return code < NCODES ? names[code] : NULL;
}

void gsd_metrics_session_opened(void) { m.opened++; }

void gsd_metrics_session_refused(unsigned wire_code) {
  m.refused[refusal_reason(wire_code) ? wire_code : WIRE_E_PROTOCOL]++;
}

void gsd_metrics_capture(const char *trigger, int stored) {
  size_t i;
  for (i = 0; i < NTRIGGERS; i++)
    if (strcmp(trigger, triggers[i]) == 0) m.captures[i][stored != 0]++;
}

void gsd_metrics_received(size_t bytes) { m.received_bytes += bytes; }

void gsd_metrics_stored(uint64_t file_bytes, uint64_t ingest_ns) {
  double s = (double)ingest_ns / 1e9;
  size_t i;
  m.stored++;
  m.stored_bytes += file_bytes;
  for (i = 0; i < NBUCKETS; i++)
    if (s <= buckets[i]) m.ingest_le[i]++;
  m.ingest_count++;
  m.ingest_sum += s;
}

void gsd_metrics_schedule_lag(int64_t lag_ms) {
  m.schedule_lag = lag_ms > 0 ? (double)lag_ms / 1e3 : 0;
}

/* ---- the page ------------------------------------------------------------------ */

typedef struct page {
  char *text;
  size_t len;
} page;

static void put(page *p, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 2, 3)))
#endif
  ;

static void put(page *p, const char *fmt, ...) {
  va_list ap;
  int n;
  va_start(ap, fmt);
  n = vsnprintf(p->text + p->len, GSD_METRICS_PAGE_MAX - p->len, fmt, ap);
  va_end(ap);
  assert(n >= 0 && (size_t)n < GSD_METRICS_PAGE_MAX - p->len);   /* a fixed set of series */
  p->len += (size_t)n;
}

static void head(page *p, const char *name, const char *type, const char *help) {
  put(p, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void one(page *p, const char *name, const char *type, const char *help, double v) {
  head(p, name, type, help);
  put(p, "%s %.17g\n", name, v);
}

static void put_sessions(page *p) {
  unsigned code;
  one(p, "gcsnapd_sessions_opened_total", "counter",
      "Agent sessions that passed Hello and became connected devices.", (double)m.opened);
  head(p, "gcsnapd_sessions_refused_total", "counter",
       "Agent connections closed before they became sessions, by reason.");
  for (code = 0; code < NCODES; code++)
    if (refusal_reason(code))
      put(p, "gcsnapd_sessions_refused_total{reason=\"%s\"} %llu\n", refusal_reason(code),
          (unsigned long long)m.refused[code]);
}

static void put_captures(page *p) {
  size_t i;
  head(p, "gcsnapd_captures_total", "counter",
       "Captures ended, by what asked for them and whether the snapshot was stored.");
  for (i = 0; i < NTRIGGERS; i++) {
    put(p, "gcsnapd_captures_total{trigger=\"%s\",outcome=\"stored\"} %llu\n", triggers[i],
        (unsigned long long)m.captures[i][1]);
    put(p, "gcsnapd_captures_total{trigger=\"%s\",outcome=\"failed\"} %llu\n", triggers[i],
        (unsigned long long)m.captures[i][0]);
  }
  one(p, "gcsnapd_snapshots_stored_total", "counter", "Snapshots stored in the catalog.",
      (double)m.stored);
  one(p, "gcsnapd_received_bytes_total", "counter", "Bytes read from agent connections.",
      (double)m.received_bytes);
  one(p, "gcsnapd_stored_bytes_total", "counter",
      "Bytes of the snapshot files stored (compressed).", (double)m.stored_bytes);
}

static void put_ingest(page *p) {
  size_t i;
  head(p, "gcsnapd_ingest_duration_seconds", "histogram",
       "Time from a snapshot's first message to its catalog row.");
  for (i = 0; i < NBUCKETS; i++)
    put(p, "gcsnapd_ingest_duration_seconds_bucket{le=\"%g\"} %llu\n", buckets[i],
        (unsigned long long)m.ingest_le[i]);
  put(p, "gcsnapd_ingest_duration_seconds_bucket{le=\"+Inf\"} %llu\n",
      (unsigned long long)m.ingest_count);
  put(p, "gcsnapd_ingest_duration_seconds_sum %.17g\n", m.ingest_sum);
  put(p, "gcsnapd_ingest_duration_seconds_count %llu\n", (unsigned long long)m.ingest_count);
}

/* Resident and virtual size from /proc/self/statm; 0 where it is absent. */
static void put_process(page *p, const gsd_metrics_gauges *g) {
  unsigned long long pages_vm = 0, pages_rss = 0;
  double pagesize = (double)sysconf(_SC_PAGESIZE);
  FILE *f = fopen("/proc/self/statm", "r");
  if (f) {
    if (fscanf(f, "%llu %llu", &pages_vm, &pages_rss) != 2) pages_vm = pages_rss = 0;
    fclose(f);
  }
  one(p, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
      (double)pages_rss * pagesize);
  one(p, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.",
      (double)pages_vm * pagesize);
  one(p, "process_start_time_seconds", "gauge",
      "Start time of the process since the Unix epoch in seconds.", g->start_time);
}

static void put_gauges(page *p, const gsd_metrics_gauges *g) {
  one(p, "gcsnapd_agents_connected", "gauge", "Devices connected now.", g->agents_connected);
  one(p, "gcsnapd_sessions_open", "gauge",
      "Agent connections open now, handshakes and closing ones included.", g->sessions_open);
  one(p, "gcsnapd_captures_pending", "gauge",
      "Captures asked for and not ended (requested or streaming).", g->captures_pending);
  one(p, "gcsnapd_http_connections", "gauge", "HTTP connections open now.", g->http_connections);
  one(p, "gcsnapd_schedule_lag_seconds", "gauge",
      "How late the last scheduled capture was asked for, after its run was due.",
      m.schedule_lag);
  if (g->store_free_bytes >= 0)
    one(p, "gcsnapd_store_free_bytes", "gauge",
        "Free bytes on the file system of the store's snapshots.", g->store_free_bytes);
}

int gsd_metrics_path(const char *path, size_t len) {
  return len == 8 && memcmp(path, "/metrics", 8) == 0;
}

size_t gsd_metrics_page(char *out, const char *version, const gsd_metrics_gauges *g) {
  page p;
  p.text = out;
  p.len = 0;
  put(&p, "# HELP gcsnapd_build_info The collector's version.\n# TYPE gcsnapd_build_info gauge\n"
          "gcsnapd_build_info{version=\"%s\"} 1\n", version);
  put_gauges(&p, g);
  put_sessions(&p);
  put_captures(&p);
  put_ingest(&p);
  put_process(&p, g);
  return p.len;
}
