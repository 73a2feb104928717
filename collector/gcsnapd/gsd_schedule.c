/* gsd_schedule.c - periodic captures: the schedules of the catalog, the
 * timer that asks a device for a capture when one of its schedules is
 * due, and the retention rule applied after each stored snapshot.
 *
 * Runs are placed on a grid, not counted from the last capture: the runs
 * of a schedule for a device are at
 *
 *     anchor + offset(device) + k * every + jitter(device, k)
 *
 * where anchor is the schedule's start (or the ms it was created: no run
 * falls before it), offset(device)
 * is the FNV-1a hash of the device ID modulo the interval, so that a fleet
 * does not start its captures in the same second, and jitter(device, k) is
 * a hash of the device and the run modulo the jitter. A run is due when
 * the latest grid time that has passed is later than the last run stored
 * in the catalog; runs missed while the device was away (or the collector
 * stopped) are thus taken once, when it is back, and the grid goes on
 * from there. A device busy with another capture is tried again at the
 * next tick. */
#include <assert.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gs_error.h"
#include "gs_json.h"
#include "gs_units.h"
#include "gsd_log.h"
#include "gsd_metrics.h"
#include "gsd_server.h"

#define TICK_MS 200

struct gsd_scheduler {
  uv_timer_t timer;
  int timer_open;
  gsd_schedule *list;
  size_t n;
  gsd_schedule_run *runs;
  size_t nruns, capruns;
};

int64_t gsd_schedule_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the grid --------------------------------------------------------------- */

static uint64_t fnv1a(const char *s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return h;
}

static uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

uint64_t gsd_schedule_offset_ms(const gsd_schedule *sch, const char *device_id) {
  assert(sch->every_ms > 0);   /* refused below 1s when the schedule is made */
  return fnv1a(device_id) % sch->every_ms;
}

static int64_t phase_of(const gsd_schedule *sch, const char *device_id) {
  int64_t anchor = sch->start_s ? sch->start_s * 1000 : sch->created_ms;
  return anchor + (int64_t)gsd_schedule_offset_ms(sch, device_id);
}

/* Grid time of run k. */
static int64_t run_time(const gsd_schedule *sch, const char *device_id, int64_t phase,
                        int64_t k) {
  int64_t at = phase + k * (int64_t)sch->every_ms;
  if (sch->jitter_ms)
    at += (int64_t)(mix(fnv1a(device_id) ^ ((uint64_t)k * 0x9e3779b97f4a7c15ull) ^
                        (uint64_t)sch->id) % sch->jitter_ms);
  return at;
}

static int in_window(const gsd_schedule *sch, int64_t now) {
  return (!sch->start_s || now >= sch->start_s * 1000) && (!sch->end_s || now < sch->end_s * 1000);
}

/* The latest grid time at or before now; 0 when there is none yet. */
static int64_t latest_run(const gsd_schedule *sch, const char *device_id, int64_t now) {
  int64_t phase = phase_of(sch, device_id), k, at;
  if (now < phase) return 0;
  k = (now - phase) / (int64_t)sch->every_ms;
  at = run_time(sch, device_id, phase, k);
  if (at <= now) return at;
  return k > 0 ? run_time(sch, device_id, phase, k - 1) : 0;
}

static int is_due(const gsd_schedule *sch, const char *device_id, int64_t last_ms, int64_t now) {
  int64_t at;
  if (!in_window(sch, now)) return 0;
  at = latest_run(sch, device_id, now);
  return at > 0 && last_ms < at;
}

/* The next run after now for a device whose last run was last_ms; 0 when
 * the schedule has ended. */
static int64_t next_run(const gsd_schedule *sch, const char *device_id, int64_t last_ms,
                        int64_t now) {
  int64_t phase = phase_of(sch, device_id), k, at;
  if (sch->end_s && now >= sch->end_s * 1000) return 0;
  if (is_due(sch, device_id, last_ms, now)) return now;
  k = now < phase ? 0 : (now - phase) / (int64_t)sch->every_ms;
  while ((at = run_time(sch, device_id, phase, k)) <= now) k++;
  if (sch->start_s && at < sch->start_s * 1000) at = sch->start_s * 1000;
  return sch->end_s && at >= sch->end_s * 1000 ? 0 : at;
}

/* ---- runs ---------------------------------------------------------------- */

static gsd_schedule_run *find_run(gsd_scheduler *sc, int64_t schedule_id, const char *device_id) {
  size_t i;
  for (i = 0; i < sc->nruns; i++)
    if (sc->runs[i].schedule_id == schedule_id && strcmp(sc->runs[i].device_id, device_id) == 0)
      return &sc->runs[i];
  return NULL;
}

static int64_t last_run(gsd_scheduler *sc, int64_t schedule_id, const char *device_id) {
  gsd_schedule_run *r = find_run(sc, schedule_id, device_id);
  return r ? r->last_ms : 0;
}

/* Remembers a run at ms of the period due at due_ms, in memory and in the
 * catalog; GS_EOF when another collector on the catalog ran that period. */
static int note_run(gsd_server *srv, int64_t schedule_id, const char *device_id, int64_t due_ms,
                    int64_t ms) {
  int rc;
  gsd_scheduler *sc = srv->sched;
  gsd_schedule_run *r = find_run(sc, schedule_id, device_id);
  if (!r) {
    if (sc->nruns == sc->capruns) {
      size_t cap = sc->capruns ? sc->capruns * 2 : 16;
      gsd_schedule_run *v = realloc(sc->runs, cap * sizeof *v);
      if (!v) return GS_ENOMEM;
      sc->runs = v;
      sc->capruns = cap;
    }
    r = &sc->runs[sc->nruns++];
    r->schedule_id = schedule_id;
    snprintf(r->device_id, sizeof r->device_id, "%s", device_id);
  }
  r->last_ms = ms;
  rc = gsd_store_schedule_claim(srv->store, schedule_id, device_id, due_ms, ms);
  if (rc != GS_OK && rc != GS_EOF) gsd_log_error("%s", gsd_store_error(srv->store));
  return rc;
}

static void forget_runs(gsd_scheduler *sc, int64_t schedule_id) {
  size_t i = 0;
  while (i < sc->nruns) {
    if (sc->runs[i].schedule_id == schedule_id) sc->runs[i] = sc->runs[--sc->nruns];
    else i++;
  }
}

static int covers(const gsd_schedule *sch, const char *device_id) {
  return fnmatch(sch->device, device_id, 0) == 0;
}

/* ---- the timer -------------------------------------------------------------- */

/* ms since the epoch as UTC, as the log stamps its lines. */
static const char *utc_ms(char *buf, size_t cap, int64_t ms) {
  time_t secs = (time_t)(ms / 1000);
  struct tm tm;
  size_t n;
  gmtime_r(&secs, &tm);
  n = strftime(buf, cap, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(buf + n, cap - n, ".%03dZ", (int)(ms % 1000));
  return buf;
}

/* The first schedule of the device that is due asks for a capture. Its
 * log line names the run (the grid time) it is for: a period is run once
 * across collectors, whenever the request is made. */
static void run_device(gsd_server *srv, gsd_session *s, int64_t now) {
  gsd_scheduler *sc = srv->sched;
  const char *device_id = gsd_session_device(s);
  size_t i;
  for (i = 0; i < sc->n; i++) {
    gsd_schedule *sch = &sc->list[i];
    gsd_capture *cap;
    const char *code;
    char due_text[40];
    int64_t due;
    if (!covers(sch, device_id) || !is_due(sch, device_id, last_run(sc, sch->id, device_id), now))
      continue;
    due = latest_run(sch, device_id, now);
    /* Taken even when refused below: a device that cannot capture now is
     * asked again at its next run, not at every tick. */
    if (note_run(srv, sch->id, device_id, due, now) == GS_EOF) {
      gsd_log_debug("schedule %lld: %s was captured for this run by another collector",
                    (long long)sch->id, device_id);
      return;
    }
    if (gsd_capture_start(srv, device_id, 0, &cap, &code) != GS_OK) {
      gsd_log_warn("schedule %lld: cannot ask %s for a capture (%s)", (long long)sch->id,
                   device_id, code);
    } else {
      cap->schedule_id = sch->id;
      gsd_metrics_schedule_lag(now - due);
      gsd_log_info("schedule %lld: capture of %s requested (request %llu, the run due at %s)",
                   (long long)sch->id, device_id, (unsigned long long)cap->request_id,
                   utc_ms(due_text, sizeof due_text, due));
    }
    return;
  }
}

static void on_tick(uv_timer_t *t) {
  gsd_server *srv = t->data;
  int64_t now = gsd_schedule_now_ms();
  gsd_session *s;
  if (srv->stopping || srv->sched->n == 0) return;
  for (s = gsd_session_next(srv, NULL); s; s = gsd_session_next(srv, s))
    if (!gsd_session_busy(s)) run_device(srv, s, now);
}

int gsd_schedules_start(gsd_server *srv, char *err, size_t cap) {
  gsd_scheduler *sc = calloc(1, sizeof *sc);
  if (!sc) {
    snprintf(err, cap, "out of memory");
    return GS_ENOMEM;
  }
  srv->sched = sc;
  if (gsd_store_schedules(srv->store, &sc->list, &sc->n) != GS_OK ||
      gsd_store_schedule_runs(srv->store, &sc->runs, &sc->nruns) != GS_OK) {
    snprintf(err, cap, "%s", gsd_store_error(srv->store));
    return GS_EIO;
  }
  sc->capruns = sc->nruns;
  uv_timer_init(srv->loop, &sc->timer);
  sc->timer.data = srv;
  sc->timer_open = 1;
  uv_timer_start(&sc->timer, on_tick, TICK_MS, TICK_MS);
  return GS_OK;
}

int gsd_schedules_reload(gsd_server *srv) {
  gsd_scheduler *sc = srv->sched;
  gsd_schedule *list;
  size_t n;
  if (!sc) return GS_OK;
  if (gsd_store_schedules(srv->store, &list, &n) != GS_OK) return GS_EIO;
  free(sc->list);
  sc->list = list;
  sc->n = n;
  return GS_OK;
}

void gsd_schedules_stop(gsd_server *srv) {
  gsd_scheduler *sc = srv->sched;
  if (sc && sc->timer_open) {
    uv_close((uv_handle_t *)&sc->timer, NULL);
    sc->timer_open = 0;
  }
}

void gsd_schedules_free(gsd_server *srv) {
  gsd_scheduler *sc = srv->sched;
  if (!sc) return;
  free(sc->list);
  free(sc->runs);
  free(sc);
  srv->sched = NULL;
}

/* ---- changes ------------------------------------------------------------------ */

int gsd_schedules_add(gsd_server *srv, gsd_schedule *sch) {
  gsd_scheduler *sc = srv->sched;
  gsd_schedule *v = realloc(sc->list, (sc->n + 1) * sizeof *v);
  if (!v) return GS_ENOMEM;
  sc->list = v;
  if (gsd_store_schedule_add(srv->store, sch) != GS_OK) return GS_EIO;
  sc->list[sc->n++] = *sch;
  gsd_log_info("schedule %lld added: %s every %llu ms", (long long)sch->id, sch->device,
               (unsigned long long)sch->every_ms);
  return GS_OK;
}

int gsd_schedules_remove(gsd_server *srv, int64_t id) {
  gsd_scheduler *sc = srv->sched;
  size_t i;
  int rc = gsd_store_schedule_remove(srv->store, id);
  if (rc != GS_OK) return rc;
  for (i = 0; i < sc->n; i++)
    if (sc->list[i].id == id) {
      memmove(&sc->list[i], &sc->list[i + 1], (sc->n - i - 1) * sizeof *sc->list);
      sc->n--;
      break;
    }
  forget_runs(sc, id);
  gsd_log_info("schedule %lld removed", (long long)id);
  return GS_OK;
}

const gsd_schedule *gsd_schedules_find(gsd_server *srv, int64_t id) {
  size_t i;
  for (i = 0; i < srv->sched->n; i++)
    if (srv->sched->list[i].id == id) return &srv->sched->list[i];
  return NULL;
}

/* ---- retention ------------------------------------------------------------------ */

void gsd_schedules_stored(gsd_server *srv, const char *device_id) {
  gsd_scheduler *sc = srv->sched;
  size_t i;
  for (i = 0; sc && i < sc->n; i++) {
    const gsd_schedule *sch = &sc->list[i];
    unsigned removed = 0;
    if ((!sch->keep && !sch->max_bytes) || !covers(sch, device_id)) continue;
    if (gsd_store_retain(srv->store, device_id, sch->keep, sch->max_bytes, &removed) != GS_OK)
      gsd_log_error("retention of schedule %lld for %s: %s", (long long)sch->id, device_id,
                    gsd_store_error(srv->store));
    else if (removed)
      gsd_log_info("retention of schedule %lld removed %u snapshot%s of %s", (long long)sch->id,
                   removed, removed == 1 ? "" : "s", device_id);
  }
}

/* ---- JSON --------------------------------------------------------------------- */

static json_t *optional_u64(uint64_t v) { return v ? gs_json_u64(v) : json_null(); }
static json_t *optional_ms(int64_t v) { return v ? json_integer((json_int_t)v) : json_null(); }

static json_t *device_json(gsd_server *srv, const gsd_schedule *sch, const char *device_id,
                           int64_t now) {
  int64_t last = last_run(srv->sched, sch->id, device_id);
  json_t *o = json_object();
  if (!o || gs_json_set(o, "device_id", gs_json_cstring(device_id)) ||
      gs_json_set(o, "connected", json_boolean(gsd_session_find(srv, device_id) != NULL)) ||
      gs_json_set(o, "offset_ms", gs_json_u64(gsd_schedule_offset_ms(sch, device_id))) ||
      gs_json_set(o, "last_run_ms", optional_ms(last)) ||
      gs_json_set(o, "next_run_ms", optional_ms(next_run(sch, device_id, last, now)))) {
    json_decref(o);
    return NULL;
  }
  return o;
}

/* The devices a schedule has run for, and the connected ones it covers. */
static json_t *devices_json(gsd_server *srv, const gsd_schedule *sch, int64_t now) {
  gsd_scheduler *sc = srv->sched;
  json_t *arr = json_array();
  gsd_session *s;
  size_t i;
  for (i = 0; arr && i < sc->nruns; i++)
    if (sc->runs[i].schedule_id == sch->id &&
        json_array_append_new(arr, device_json(srv, sch, sc->runs[i].device_id, now))) {
      json_decref(arr);
      return NULL;
    }
  for (s = gsd_session_next(srv, NULL); arr && s; s = gsd_session_next(srv, s)) {
    const char *id = gsd_session_device(s);
    if (!covers(sch, id) || find_run(sc, sch->id, id)) continue;
    if (json_array_append_new(arr, device_json(srv, sch, id, now))) {
      json_decref(arr);
      return NULL;
    }
  }
  return arr;
}

json_t *gsd_schedule_json(gsd_server *srv, const gsd_schedule *sch) {
  char every[32];
  json_t *o = json_object();
  gs_units_format_duration(every, sizeof every, sch->every_ms);
  if (!o || gs_json_set(o, "id", json_integer((json_int_t)sch->id)) ||
      gs_json_set(o, "device", gs_json_cstring(sch->device)) ||
      gs_json_set(o, "every", json_string(every)) ||
      gs_json_set(o, "every_ms", gs_json_u64(sch->every_ms)) ||
      gs_json_set(o, "jitter_ms", gs_json_u64(sch->jitter_ms)) ||
      gs_json_set(o, "keep", optional_u64(sch->keep)) ||
      gs_json_set(o, "max_bytes", optional_u64(sch->max_bytes)) ||
      gs_json_set(o, "start", optional_ms(sch->start_s)) ||
      gs_json_set(o, "end", optional_ms(sch->end_s)) ||
      gs_json_set(o, "created", json_integer((json_int_t)(sch->created_ms / 1000))) ||
      gs_json_set(o, "created_ms", json_integer((json_int_t)sch->created_ms)) ||
      gs_json_set(o, "devices", devices_json(srv, sch, gsd_schedule_now_ms()))) {
    json_decref(o);
    return NULL;
  }
  return o;
}

json_t *gsd_schedules_json(gsd_server *srv) {
  json_t *arr = json_array(), *o = json_object();
  size_t i;
  for (i = 0; arr && i < srv->sched->n; i++)
    if (json_array_append_new(arr, gsd_schedule_json(srv, &srv->sched->list[i]))) {
      json_decref(arr);
      arr = NULL;
    }
  if (!o || gs_json_set(o, "schedules", arr)) {
    json_decref(o);
    return NULL;
  }
  return o;
}
