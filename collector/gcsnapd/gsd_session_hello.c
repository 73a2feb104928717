/* gsd_session_hello.c - a session's start: Hello, the device key's
 * challenge and proof (proto/README.md), and admission: a device with a key
 * proves it before Welcome; once one device has a key (or with
 * --require-keys), a device without one is refused. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gsd_session_int.h"

/* ---- messages ------------------------------------------------------------ */

static int is_text(const char *p, size_t len) {
  const unsigned char *u = (const unsigned char *)p, *e = u + len;
  while (u < e) {
    size_t n = 1;
    if (*u < 0x20 || *u == 0x7f) return 0;
    if (*u >= 0x80 && !(n = gs_utf8_len(u, e))) return 0;
    u += n;
  }
  return 1;
}

/* Whether the device must prove its key: GS_OK when it need not (no
 * key anywhere and keys not required), GS_EOF when AuthChallenge went out,
 * an error when the session was refused. */
static int challenge(gsd_session *s) {
  gsd_store *store = s->srv->store;
  uint64_t keys = 0;
  int rc = gsd_store_key_verifier(store, s->device_id, s->verifier, sizeof s->verifier);
  if (rc == GS_EOF && (rc = gsd_store_key_count(store, &keys)) == GS_OK) {
    if (keys == 0 && !s->srv->cfg->require_keys) return GS_OK;
    gsd_sess_abort_session(s, GS_WIRE_E_AUTH, "device '%s' has no key at this collector (add one with"
                  " 'gcsnap keys add' on the collector's host)", s->device_id);
    return GS_EINVAL;
  }
  if (rc == GS_OK && (rc = gsd_auth_nonce(s->nonce)) != GS_OK)
    gsd_log_error("device %s: no random bytes for the challenge", s->device_id);
  else if (rc != GS_OK)
    gsd_log_error("%s", gsd_store_error(store));
  if (rc != GS_OK) {
    gsd_sess_abort_session(s, GS_WIRE_E_STORAGE, "the collector cannot check the device's key");
    return rc;
  }
  s->challenged = 1;
  gsd_sess_send_challenge(s);
  gsd_log_debug("device %s (%s): challenge sent", s->device_id, s->address);
  return GS_EOF;
}

static void admit(gsd_session *s, const Gcsnap__Hello *h);

/* The answer to the challenge, checked against the Hello it followed. */
void gsd_sess_on_proof(gsd_session *s, const Gcsnap__AuthProof *p) {
  Gcsnap__Hello *h;
  Gcsnap__Envelope *env = gcsnap__envelope__unpack(NULL, s->hello_len, s->hello);
  int ok;
  if (!env || env->body_case != GCSNAP__ENVELOPE__BODY_HELLO) {
    if (env) gcsnap__envelope__free_unpacked(env, NULL);
    gsd_sess_abort_session(s, GS_WIRE_E_STORAGE, "out of memory");
    return;
  }
  h = env->hello;
  ok = gsd_auth_check(s->verifier, s->nonce, h->protocol_version, s->device_id,
                      p->proof.data, p->proof.len);
  /* One proof per nonce: whatever it was, this one is spent. */
  gs_sha256_wipe(s->nonce, sizeof s->nonce);
  gs_sha256_wipe(s->verifier, sizeof s->verifier);
  s->challenged = 0;
  if (ok) admit(s, h);
  else gsd_sess_abort_session(s, GS_WIRE_E_AUTH, "wrong key for device '%s'", s->device_id);
  gcsnap__envelope__free_unpacked(env, NULL);
}

void gsd_sess_on_hello(gsd_session *s, const Gcsnap__Hello *h) {
  const char *id = h->device_id ? h->device_id : "";
  size_t len = strlen(id);
  if (h->protocol_version != GS_WIRE_PROTOCOL_VERSION) {
    gsd_sess_abort_session(s, GS_WIRE_E_VERSION, "protocol version %u is not supported (this collector "
                  "speaks %u)", h->protocol_version, GS_WIRE_PROTOCOL_VERSION);
    return;
  }
  if (len == 0) {
    gsd_sess_abort_session(s, GS_WIRE_E_DEVICE, "Hello without a device ID");
    return;
  }
  if (len > GSD_DEVICE_ID_MAX || !is_text(id, len)) {
    gsd_sess_abort_session(s, GS_WIRE_E_DEVICE, "the device ID is not text of at most %d bytes",
                  GSD_DEVICE_ID_MAX);
    return;
  }
  /* Named from here on in the log; gsd_session_find() skips this state. */
  memcpy(s->device_id, id, len + 1);
  if (!(s->hello = malloc(s->frame_len ? s->frame_len : 1))) {
    gsd_sess_abort_session(s, GS_WIRE_E_STORAGE, "out of memory");
    return;
  }
  memcpy(s->hello, s->frame, s->frame_len);
  s->hello_len = s->frame_len;
  if (challenge(s) == GS_OK) admit(s, h);
}

/* The device passed (or needs no key): it is connected. */
static void admit(gsd_session *s, const Gcsnap__Hello *h) {
  const char *id = s->device_id;
  gsd_device_info d;
  if (gsd_session_find(s->srv, id)) {
    gsd_sess_abort_session(s, GS_WIRE_E_DEVICE, "device %s is already connected", id);
    return;
  }
  d.device_id = id;
  d.app_name = h->app_name;
  d.architecture = h->architecture;
  d.agent_version = h->agent_version;
  d.pointer_size = h->pointer_size;
  d.protocol_version = h->protocol_version;
  if (gsd_store_session_begin(s->srv->store, &d, s->address, &s->session_id) != GS_OK) {
    gsd_log_error("%s", gsd_store_error(s->srv->store));
    gsd_sess_abort_session(s, GS_WIRE_E_STORAGE, "the collector cannot record the session");
    return;
  }
  s->connected_since = time(NULL);
  gsd_metrics_session_opened();
  s->state = ST_IDLE;
  gsd_sess_arm_timer(s);
  gsd_sess_send_welcome(s);
  gsd_sess_start_recording(s);
  free(s->hello);
  s->hello = NULL;
  gsd_log_info("device %s connected from %s (agent %s, %s, %s)", s->device_id, s->address,
               h->agent_version, h->app_name, h->architecture);
}

void gsd_sess_set_limits(gsd_session *s) {
  const gsd_config *cfg = s->srv->cfg;
  gsd_ingest_limits lim;
  lim.max_objects = cfg->max_objects;
  lim.max_references = cfg->max_references;
  lim.max_sections = cfg->max_sections;
  lim.max_validator_bytes = cfg->max_validator_bytes;
  lim.min_free_bytes = cfg->min_free_bytes;
  lim.max_object_refs = cfg->max_object_references;
  gsd_ingest_set_limits(s->ingest, &lim);
}

/* Starts receiving; a snapshot stored before is only checked, and one that
 * cannot be written is received and failed at its end. */
