/* gsd_listen.c - the listener for agents and its admission limits: a
 * connection over --max-sessions or --max-sessions-per-address is told
 * why (Error 9) and closed before it becomes a session. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gsd_session_int.h"

/* ---- listener ------------------------------------------------------------ */

static void peer_address(gsd_session *s) {
  struct sockaddr_storage ss;
  int n = sizeof ss;
  char ip[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (uv_tcp_getpeername(&s->tcp, (struct sockaddr *)&ss, &n) == 0) {
    if (ss.ss_family == AF_INET6) {
      uv_ip6_name((struct sockaddr_in6 *)&ss, ip, sizeof ip);
      port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
      snprintf(s->ip, sizeof s->ip, "%s", ip);
      snprintf(s->address, sizeof s->address, "[%s]:%d", ip, port);
      return;
    }
    uv_ip4_name((struct sockaddr_in *)&ss, ip, sizeof ip);
    port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
  }
  snprintf(s->ip, sizeof s->ip, "%s", ip);
  snprintf(s->address, sizeof s->address, "%s:%d", ip, port);
}

/* Why a new connection from s->ip is over a session limit, or NULL. Refused
 * connections on their way out do not count. */
static const char *over_limit(gsd_session *s, char *why, size_t cap, size_t *refused) {
  const gsd_config *cfg = s->srv->cfg;
  const gsd_session *o;
  uint64_t all = 0, same = 0;
  *refused = 0;
  for (o = s->srv->sessions; o; o = o->next) {
    if (o->refused) { ++*refused; continue; }
    all++;
    same += strcmp(o->ip, s->ip) == 0;
  }
  if (all >= cfg->max_sessions)
    snprintf(why, cap, "the collector has %llu sessions, its limit (--max-sessions)",
             (unsigned long long)all);
  else if (same >= cfg->max_sessions_per_address)
    snprintf(why, cap, "%llu sessions from %s already, the limit per address"
             " (--max-sessions-per-address)", (unsigned long long)same, s->ip);
  else
    return NULL;
  return why;
}

static void on_connection(uv_stream_t *listener, int status) {
  gsd_server *srv = listener->data;
  gsd_session *s;
  char why[200];
  size_t refused;
  if (status < 0) {
    gsd_log_warn("agent listener: %s", uv_strerror(status));
    return;
  }
  if (!(s = calloc(1, sizeof *s))) return;
  s->srv = srv;
  uv_tcp_init(srv->loop, &s->tcp);
  uv_timer_init(srv->loop, &s->timer);
  s->tcp.data = s->timer.data = s;
  s->open_handles = 2;
  if (uv_accept(listener, (uv_stream_t *)&s->tcp) != 0 || srv->stopping) {
    gsd_sess_close_now(s);
    return;
  }
  peer_address(s);
  s->accepted_ms = s->last_rx_ms = uv_now(srv->loop);
  if (over_limit(s, why, sizeof why, &refused)) {
    /* Told with Error 9 (busy), so that the agent logs why and retries
     * later; past MAX_REFUSED being told, closed without a word. */
    if (refused >= MAX_REFUSED) {
      gsd_log_warn("refusing the connection from %s: %s", s->address, why);
      gsd_metrics_session_refused(GS_WIRE_E_BUSY);
      gsd_sess_close_now(s);
      return;
    }
    s->refused = 1;
  }
  uv_tcp_nodelay(&s->tcp, 1);
  uv_tcp_keepalive(&s->tcp, 1, 30);
  s->next = srv->sessions;
  if (srv->sessions) srv->sessions->prev = s;
  srv->sessions = s;
  s->in_list = 1;
  srv->nsessions++;
  gsd_log_debug("connection from %s", s->address);
  gsd_sess_arm_timer(s);
  gsd_sess_resume_reading(s);
  if (s->refused) gsd_sess_abort_session(s, GS_WIRE_E_BUSY, "connection refused: %s", why);
}

int gsd_sessions_listen(gsd_server *srv, const char *addr, char *bound, size_t cap) {
  srv->listener.data = srv;
  srv->listening = 1;
  return gsd_listen(srv->loop, &srv->listener, addr, on_connection, bound, cap);
}

void gsd_sessions_stop(gsd_server *srv) {
  gsd_session *s, *next;
  if (srv->listening) {
    uv_close((uv_handle_t *)&srv->listener, NULL);
    srv->listening = 0;
  }
  for (s = srv->sessions; s; s = next) {
    next = s->next;
    if (s->state == ST_FINISHING) s->stop_after_job = 1;
    else if (s->state == ST_CLOSING) gsd_sess_arm_timer(s);
    else gsd_sess_abort_session(s, GS_WIRE_E_SHUTDOWN, "the collector is stopping");
  }
}
