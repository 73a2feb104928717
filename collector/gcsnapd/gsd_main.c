/* gsd_main.c - gcsnapd, the collector daemon: settings, the loop, signals.
 *
 * Everything runs on one libuv loop. SIGINT and SIGTERM stop it cleanly:
 * the listeners close, every session ends (a snapshot being received is
 * recorded as failed and its temporary file removed; one being synced
 * finishes first), waiting HTTP requests are answered, and the loop runs
 * until the connections are gone (at most DRAIN_MAX_MS).
 *
 * Exposure: the agent port answers beyond loopback only when the catalog
 * holds agent keys, and the HTTP API only with a token (gsd_config.c);
 * --insecure lifts both. A refused setting exits 2, like a bad flag. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <uv.h>
#include "gs_error.h"
#include "gs_file.h"
#include "gs_output.h"
#include "gsd_config.h"
#include "gsd_log.h"
#include "gsd_server.h"

#define DRAIN_TICK_MS 20
#define DRAIN_MAX_MS 5000
/* How often a collector on a shared catalog polls it for forwarded
 * captures, and every how many ticks it looks for stopped collectors and
 * reads the schedules again. */
#define SHARED_TICK_MS 100
#define SHARED_SLOW_TICKS 20

typedef struct daemon_state {
  gsd_server srv;
  uv_signal_t sigint, sigterm;
  uv_timer_t drain;
  uv_timer_t shared;              /* on_shared_tick */
  unsigned shared_ticks;
  uint64_t drain_start;
} daemon_state;

static void on_drain(uv_timer_t *t) {
  daemon_state *d = t->data;
  gsd_server *srv = &d->srv;
  int done = srv->sessions == NULL && (!srv->http || gsd_http_connections(srv->http) == 0);
  if (!done && uv_now(srv->loop) - d->drain_start < DRAIN_MAX_MS) return;
  if (!done) {
    gsd_log_warn("stopping with connections still open (%zu agents, %zu HTTP)", srv->nsessions,
                 srv->http ? gsd_http_connections(srv->http) : 0);
    uv_stop(srv->loop);
  } else if (srv->http) {
    gsd_http_close(srv->http);
  }
  uv_close((uv_handle_t *)t, NULL);
}

static void stop(daemon_state *d, const char *why) {
  gsd_server *srv = &d->srv;
  if (srv->stopping) return;
  srv->stopping = 1;
  gsd_log_info("stopping (%s)", why);
  uv_close((uv_handle_t *)&d->sigint, NULL);
  uv_close((uv_handle_t *)&d->sigterm, NULL);
  uv_close((uv_handle_t *)&d->shared, NULL);
  gsd_schedules_stop(srv);
  gsd_sessions_stop(srv);
  if (srv->http) gsd_http_stop(srv->http);
  d->drain_start = uv_now(srv->loop);
  uv_timer_start(&d->drain, on_drain, DRAIN_TICK_MS, DRAIN_TICK_MS);
}

/* On a shared catalog: captures forwarded between collectors; what a
 * collector that stopped without ending its snapshots (killed, or its
 * machine gone) left is failed by another one, so that none stays
 * "receiving"; the schedules others changed are read again; and the
 * catalog forgets the oldest captures asked through this one. */
static void on_shared_tick(uv_timer_t *t) {
  daemon_state *d = t->data;
  gsd_server *srv = &d->srv;
  gsd_forward_poll(srv);
  if (d->shared_ticks++ % SHARED_SLOW_TICKS) return;
  if (gsd_store_recover_stopped(srv->store) != GS_OK || gsd_schedules_reload(srv) != GS_OK ||
      gsd_store_captures_prune(srv->store, GSD_CAPTURES_KEPT) != GS_OK)
    gsd_log_error("%s", gsd_store_error(srv->store));
}

static void on_signal(uv_signal_t *h, int signum) {
  stop(h->data, signum == SIGINT ? "SIGINT" : "SIGTERM");
}

/* Agents may connect from beyond loopback only when they must prove who
 * they are (keys in the catalog, or --require-keys), unless --insecure
 * says otherwise. */
static int check_agent_exposure(gsd_server *srv, const gsd_config *cfg) {
  uint64_t keys = 0;
  if (gsd_config_is_loopback(cfg->listen) || cfg->require_keys) return GS_OK;
  if (gsd_store_key_count(srv->store, &keys) != GS_OK) {
    gsd_log_error("agent keys: %s", gsd_store_error(srv->store));
    return GS_EIO;
  }
  if (keys > 0) return GS_OK;
  if (!cfg->insecure) {
    gsd_log_error("refusing to listen for agents on %s, beyond loopback, with no agent keys "
                  "in the catalog: add them with 'gcsnap keys add DEVICE' (or give "
                  "--insecure to allow it)", cfg->listen);
    return GS_EINVAL;
  }
  gsd_log_warn("listening for agents on %s without agent keys (--insecure): any host that "
               "reaches it can send snapshots", cfg->listen);
  return GS_OK;
}

static void on_orphan(void *ctx, const char *folder, const char *name) {
  const char *store = ctx;
  gsd_log_warn("%s/snapshots/%s/%s is in the store but in no catalog row (a catalog lost or "
               "replaced?): kept as it is, not served", store, folder, name);
}

static int report_orphans(gsd_server *srv, const gsd_config *cfg) {
  unsigned n;
  if (gsd_store_orphans(srv->store, on_orphan, (void *)cfg->store, &n) != GS_OK) {
    gsd_log_error("%s", gsd_store_error(srv->store));
    return GS_EIO;
  }
  if (n) gsd_log_warn("%u snapshot files have no catalog row; new snapshot IDs go on past theirs", n);
  return GS_OK;
}

static int start(daemon_state *d, const gsd_config *cfg) {
  gsd_server *srv = &d->srv;
  char err[600], bound[300];
  int rc;
  if ((rc = gsd_store_open_catalog(&srv->store, cfg->store, cfg->catalog, cfg->identity, err,
                                    sizeof err)) != GS_OK) {
    gsd_log_error("%s", err);
    return rc == GS_EINVAL ? GS_EINVAL : GS_EIO;
  }
  if (cfg->catalog[0]) uv_timer_start(&d->shared, on_shared_tick, 0, SHARED_TICK_MS);
  if ((rc = check_agent_exposure(srv, cfg)) != GS_OK) return rc;
  if ((rc = report_orphans(srv, cfg)) != GS_OK) return rc;
  srv->next_request_id = gsd_store_max_request_id(srv->store) + 1;
  if (gsd_schedules_start(srv, err, sizeof err) != GS_OK) {
    gsd_log_error("schedules: %s", err);
    return GS_EIO;
  }
  if (gsd_sessions_listen(srv, cfg->listen, bound, sizeof bound) != GS_OK) {
    gsd_log_error("agents: %s", bound);
    return GS_EIO;
  }
  gsd_log_info("listening for agents on %s", bound);
  if ((rc = gsd_http_start(srv, cfg->http, bound, sizeof bound)) != GS_OK) {
    gsd_log_error("HTTP API: %s", bound);
    return rc == GS_EINVAL ? GS_EINVAL : GS_EIO;    /* EINVAL: a bad certificate or key */
  }
  gsd_log_info("HTTP API on %s://%s/api/", cfg->http_tls_cert[0] ? "https" : "http", bound);
  if (!cfg->http_token[0] && !gsd_config_is_loopback(cfg->http))
    gsd_log_warn("HTTP API on %s without a token (--insecure): any host that reaches it can "
                 "read snapshots and ask for captures", bound);
  gsd_log_info("store %s%s", cfg->store, cfg->catalog[0] ? ", catalog in PostgreSQL" : "");
  if (cfg->record[0]) {
    if (mkdir(cfg->record, 0777) != 0 && errno != EEXIST) {
      gsd_log_error("cannot create the recording folder '%s': %s", cfg->record, strerror(errno));
      return GS_EIO;
    }
    gsd_log_info("recording sessions into %s", cfg->record);
  }
  return GS_OK;
}

int main(int argc, char **argv) {
  static daemon_state d;
  gsd_server *srv = &d.srv;
  gsd_config cfg;
  uv_loop_t loop;
  char err[600];
  int rc;
  if (gsd_config_parse(&cfg, argc, argv, err, sizeof err) != GS_OK) {
    fprintf(stderr, "gcsnapd: %s\n%s", err, gsd_usage);
    return 2;
  }
  if (cfg.help) { fputs(gsd_usage, stdout); return 0; }
  if (cfg.version) { printf("gcsnapd %s\n", GSD_VERSION_STRING); return 0; }
  gsd_log_set_level(cfg.log_level);
  gsd_log_set_format(cfg.log_format);
  gs_file_set_max_refs((size_t)cfg.max_object_references);   /* uploads and analyses */
  gs_output_keep_signals();   /* SIGTERM stops gcsnapd cleanly, not an output */
  signal(SIGPIPE, SIG_IGN);
  uv_loop_init(&loop);
  srv->loop = &loop;
  srv->cfg = &cfg;
  srv->started = time(NULL);
  uv_signal_init(&loop, &d.sigint);
  uv_signal_init(&loop, &d.sigterm);
  uv_timer_init(&loop, &d.drain);
  uv_timer_init(&loop, &d.shared);
  d.shared.data = &d;
  d.sigint.data = d.sigterm.data = d.drain.data = &d;
  uv_signal_start(&d.sigint, on_signal, SIGINT);
  uv_signal_start(&d.sigterm, on_signal, SIGTERM);
  rc = start(&d, &cfg);
  if (rc != GS_OK) stop(&d, "cannot start");
  uv_run(&loop, UV_RUN_DEFAULT);
  gsd_http_free(srv->http);
  gsd_captures_free(srv);
  gsd_schedules_free(srv);
  gsd_store_close(srv->store);
  if (uv_loop_close(&loop) != 0) gsd_log_debug("loop closed with handles open");
  if (rc == GS_OK) gsd_log_info("stopped");
  return rc == GS_OK ? 0 : rc == GS_EINVAL ? 2 : 1;
}
