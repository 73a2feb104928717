/* gsd_store.h - the collector's store: a folder with a catalog (SQLite, or
 * PostgreSQL shared by several collectors) and the snapshot files.
 *
 *   STORE/catalog.db                          devices, sessions, snapshots,
 *                                             schedules and their last runs,
 *                                             device key verifiers
 *   STORE/snapshots/<device>/<id>.gclog.zst    one complete snapshot
 *   STORE/snapshots/<device>/<id>.gclog.zst.tmp   one being received
 *
 * <device> is the device ID with every byte outside [A-Za-z0-9_-] (and a
 * leading '.') written as %XX; <id> is the catalog's snapshot ID. A snapshot
 * row is inserted as "receiving" when its stream starts, and turned into
 * "complete" (with its summary) or "failed" (with the reason) in one
 * transaction when it ends; "receiving" rows left by a crash are failed when
 * the store is opened again, and their temporary files removed.
 *
 * Used from the loop thread only. */
#ifndef GSD_STORE_H
#define GSD_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

/* Longest device ID accepted, in bytes: escaped (at most 3 bytes each) it
 * stays a valid file name. */
#define GSD_DEVICE_ID_MAX 80
/* The store folder of gcsnapd and gcsnap keys when none is given. */
#define GSD_DEFAULT_STORE "./gcsnap-store"

typedef struct gsd_store gsd_store;

/* What an agent said about its device in Hello. */
typedef struct gsd_device_info {
  const char *device_id;
  const char *app_name;
  const char *architecture;
  const char *agent_version;
  unsigned pointer_size;
  unsigned protocol_version;
} gsd_device_info;

/* A snapshot as SnapshotBegin announced it. */
typedef struct gsd_snapshot_begin {
  const char *device_id;
  int64_t session_id;
  uint64_t request_id;
  uint64_t agent_snapshot_id;
  const char *trigger;
  int stable_ids;
  uint64_t clock_ms;
  int64_t schedule_id;            /* the schedule that asked for it; 0 when none */
  const char *source_format;      /* uploads: "gclog", "hprof", ...; NULL for captures */
  const char *note;               /* uploads: the uploader's note, or NULL */
} gsd_snapshot_begin;

/* What is known when a snapshot ends. For a failed one, the figures are
 * those received so far and summary is NULL. */
typedef struct gsd_snapshot_end {
  uint64_t objects, bytes, references, roots, types, sections;
  uint64_t unreachable, dangling_references;   /* from the summary */
  uint64_t text_bytes, file_bytes, wire_bytes;
  uint32_t crc32;
  uint64_t errors, warnings;                   /* validation */
  const char *first_error;                     /* NULL when none */
  const char *summary;                         /* JSON text, complete only */
} gsd_snapshot_end;

int gsd_store_open(gsd_store **s, const char *dir, char *err, size_t cap);
/* gsd_store_open with a catalog: NULL or "" for STORE/catalog.db, or a
 * PostgreSQL URL (gsd_store_is_pg_url) that several collectors share, each
 * over the same folder dir. In a shared catalog, identity names this
 * collector (NULL: the host name): its sessions and in-flight snapshots are
 * its own, recovery touches only those, and a second collector opened with
 * the identity of a running one is refused (GS_EINVAL). */
int gsd_store_open_catalog(gsd_store **s, const char *dir, const char *catalog,
                           const char *identity, char *err, size_t cap);
/* In a shared catalog, what collectors that stopped left: their snapshots
 * being received are failed (files removed), their sessions ended, their
 * devices no longer held. GS_OK at once for a SQLite catalog. */
int gsd_store_recover_stopped(gsd_store *s);
/* Whether catalog is a PostgreSQL URL: postgresql://... or postgres://... */
int gsd_store_is_pg_url(const char *catalog);
void gsd_store_close(gsd_store *s);
/* The message of the last failed call. */
const char *gsd_store_error(const gsd_store *s);

/* Records a device (new or seen again) and a session for it. */
int gsd_store_session_begin(gsd_store *s, const gsd_device_info *d, const char *address,
                            int64_t *session_id);
/* Records a device that has no agent session (a file uploaded for it). */
int gsd_store_device_add(gsd_store *s, const char *device_id);
int gsd_store_session_end(gsd_store *s, int64_t session_id, const char *device_id,
                          const char *reason);

/* GS_OK with *id when (device, agent_snapshot_id) is already stored
 * complete; GS_EOF when not. */
int gsd_store_find_complete(gsd_store *s, const char *device_id, uint64_t agent_snapshot_id,
                            int64_t *id);
/* Inserts the "receiving" row and makes the device's folder; *id is the
 * new snapshot ID. */
int gsd_store_snapshot_begin(gsd_store *s, const gsd_snapshot_begin *b, int64_t *id);
/* Sets the source format of an uploaded snapshot ("hprof", ...). */
int gsd_store_snapshot_format(gsd_store *s, int64_t id, const char *format);
int gsd_store_snapshot_complete(gsd_store *s, int64_t id, const gsd_snapshot_end *e);
int gsd_store_snapshot_fail(gsd_store *s, int64_t id, const char *reason,
                            const gsd_snapshot_end *e);

/* Paths of a snapshot's file and temporary file (malloc'd; NULL when out
 * of memory). */
char *gsd_store_snapshot_path(const gsd_store *s, const char *device_id, int64_t id);
char *gsd_store_tmp_path(const gsd_store *s, const char *device_id, int64_t id);

/* Free space where snapshot files go (statvfs of STORE/snapshots, the
 * blocks an unprivileged writer may use). */
int gsd_store_free_bytes(gsd_store *s, uint64_t *free_bytes);
/* GS_OK when that is at least min_free (always, for 0); GS_ELIMIT, with
 * gsd_store_error() starting "disk full:", when it is less; GS_EIO when it
 * cannot be read. */
int gsd_store_check_space(gsd_store *s, uint64_t min_free);

/* The highest request ID in the catalog, so that new ones never repeat. */
uint64_t gsd_store_max_request_id(gsd_store *s);
/* Records that request ID *id was issued, so that IDs go on rising across
 * restarts even when no snapshot row names them. On a catalog shared by
 * several collectors *id may be raised past the IDs the others issued. */
int gsd_store_request_issued(gsd_store *s, uint64_t *id);
/* Snapshot files with no complete row naming them (a catalog lost or
 * replaced): fn gets each (folder under snapshots/, file name); they are
 * kept, never served, and new IDs go on past theirs so that no new file
 * meets them. Call once the store is open. */
typedef void (*gsd_store_orphan_fn)(void *ctx, const char *folder, const char *name);
int gsd_store_orphans(gsd_store *s, gsd_store_orphan_fn fn, void *ctx, unsigned *count);
/* Records why the file of complete snapshot id does not match its row. */
int gsd_store_mark_damaged(gsd_store *s, int64_t id, const char *why);

/* ---- schedules ---- */

/* A schedule: captures of the devices whose ID matches device (an ID or a
 * glob pattern, as fnmatch() reads it) every every_ms, each run delayed by
 * up to jitter_ms, between start_s and end_s (Unix seconds; 0 for no
 * bound), and the retention rule applied to those devices: keep at most
 * keep complete snapshots and at most max_bytes of files (0: no limit). */
typedef struct gsd_schedule {
  int64_t id;
  char device[GSD_DEVICE_ID_MAX + 1];
  uint64_t every_ms, jitter_ms;
  int64_t start_s, end_s;
  uint64_t keep, max_bytes;
  int64_t created_ms;             /* Unix ms */
} gsd_schedule;

/* Inserts sch and sets its id and created_ms. */
int gsd_store_schedule_add(gsd_store *s, gsd_schedule *sch);
/* Removes a schedule and its runs; GS_EOF when there is no such one. */
int gsd_store_schedule_remove(gsd_store *s, int64_t id);
/* Every schedule, by ID (malloc'd array; free() it). */
int gsd_store_schedules(gsd_store *s, gsd_schedule **out, size_t *n);

/* The last run of a schedule for a device, as Unix ms. */
typedef struct gsd_schedule_run {
  int64_t schedule_id;
  char device_id[GSD_DEVICE_ID_MAX + 1];
  int64_t last_ms;
} gsd_schedule_run;

int gsd_store_schedule_runs(gsd_store *s, gsd_schedule_run **out, size_t *n);
int gsd_store_schedule_ran(gsd_store *s, int64_t schedule_id, const char *device_id,
                           int64_t ms);
/* Records a run at ms of the period that began at due_ms, unless one was
 * recorded in that period already (by another collector on a shared
 * catalog): GS_OK when this run is the period's, GS_EOF when not. */
int gsd_store_schedule_claim(gsd_store *s, int64_t schedule_id, const char *device_id,
                             int64_t due_ms, int64_t ms);

/* Applies a retention rule to a device's complete snapshots: the newest
 * keep (0: all) whose files add up to at most max_bytes (0: no bound)
 * stay, the newest one always; the others go, rows and files. *removed
 * counts them. A row leaves the catalog in the same transaction that
 * queues its file for removal; the file goes next, and files still queued
 * (after a crash) go when the store is opened. So no complete row ever
 * names a missing file. */
int gsd_store_retain(gsd_store *s, const char *device_id, uint64_t keep, uint64_t max_bytes,
                     unsigned *removed);

/* ---- queries for the HTTP API (JSON as in the API contract) ---- */

/* {"snapshots": [...]}, newest first; device and status may be NULL; limit
 * 0 means no limit. */
int gsd_store_list_snapshots(gsd_store *s, const char *device_id, const char *status,
                             uint64_t limit, json_t **out);
/* One entry with "summary"; GS_EOF when there is no such complete or failed
 * snapshot. *path (may be NULL) gets the file of a complete one. */
int gsd_store_get_snapshot(gsd_store *s, int64_t id, int with_summary, json_t **out,
                           char **path);
/* Every device the catalog knows, as API entries without the live fields
 * (connected, busy, address, connected_since), which the caller adds. */
int gsd_store_list_devices(gsd_store *s, json_t **out);
/* GS_OK when the catalog knows the device, GS_EOF when not. */
int gsd_store_device_known(gsd_store *s, const char *device_id);

/* ---- captures forwarded between collectors (a shared catalog only) ---- */

/* A capture asked through one collector of a device another one holds:
 * a row the holder claims, runs and answers, and the asker reads back. */
typedef struct gsd_forward {
  int64_t id;
  char device_id[GSD_DEVICE_ID_MAX + 1];
  int stable_ids;
  int64_t snapshot_id;            /* in an answer: the stored snapshot; 0 when failed */
  char reason[256];               /* in an answer: why it failed; "" when stored */
} gsd_forward;

/* GS_OK with the identity of the other collector that holds the device's
 * session; GS_EOF when none does (always, on SQLite). */
int gsd_store_device_holder(gsd_store *s, const char *device_id, char *holder, size_t cap);
/* Queues a capture of device_id for holder; *id names it. */
int gsd_store_forward_ask(gsd_store *s, const char *device_id, const char *holder,
                          int stable_ids, int64_t *id);
/* Claims the captures queued for this collector (malloc'd; free() it). */
int gsd_store_forward_take(gsd_store *s, gsd_forward **out, size_t *n);
/* Answers a claimed capture: snapshot_id when stored, else the reason. */
int gsd_store_forward_answer(gsd_store *s, int64_t id, int64_t snapshot_id, const char *reason);
/* Takes the answers to this collector's forwarded captures (malloc'd). */
int gsd_store_forward_answers(gsd_store *s, gsd_forward **out, size_t *n);

/* The state of a capture ("requested", "streaming", "stored", "failed"),
 * kept in a shared catalog so that any collector can tell it; snapshot_id
 * 0 and reason NULL when there is none. Keeps nothing on SQLite. */
int gsd_store_capture_state(gsd_store *s, uint64_t request_id, const char *device_id,
                            const char *state, int64_t snapshot_id, const char *reason);
/* The capture as GET /api/captures/ID gives it; GS_EOF when the catalog
 * has none (always, on SQLite). */
int gsd_store_capture_get(gsd_store *s, uint64_t request_id, json_t **out);
/* Keeps the newest keep (at least 1) ended captures asked through this
 * collector, and those in flight. */
int gsd_store_captures_prune(gsd_store *s, unsigned keep);

/* ---- device keys (gsd_auth.h) ---- */

/* Opens only the catalog, for the keys, while gcsnapd may be running: no
 * recovery, no folders; create makes the folder and catalog when missing,
 * else a missing catalog is GS_EIO. Close with gsd_store_close. */
int gsd_store_keys_open(gsd_store **s, const char *dir, int create, char *err, size_t cap);
/* The same on a PostgreSQL catalog (its schema made when missing). */
int gsd_store_keys_open_pg(gsd_store **s, const char *url, char *err, size_t cap);
/* How many devices have a key: with one or more, every device needs one. */
int gsd_store_key_count(gsd_store *s, uint64_t *n);
/* GS_OK with the device's verifier (len bytes), GS_EOF when it has no key. */
int gsd_store_key_verifier(gsd_store *s, const char *device_id, uint8_t *verifier, size_t len);
/* Stores a verifier; GS_EINVAL when the device has a key and replace is 0. */
int gsd_store_key_set(gsd_store *s, const char *device_id, const uint8_t *verifier, size_t len,
                      int replace);
/* GS_EOF when the device had no key. */
int gsd_store_key_remove(gsd_store *s, const char *device_id);
/* [{"device_id": ..., "created": Unix seconds}, ...] by device ID. */
int gsd_store_list_keys(gsd_store *s, json_t **out);

/* Escapes a device ID into a folder name (see above); returns a malloc'd
 * string. */
char *gsd_store_escape_device(const char *device_id);

#endif
