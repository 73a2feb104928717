/* gsd_pg.h - the store's PostgreSQL catalog: the same calls as the SQLite
 * one (gsd_store.h), which hand over to these when the store has s->pg.
 * Not for use outside store/. */
#ifndef GSD_PG_H
#define GSD_PG_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

struct gsd_store;
struct gsd_pg;
struct gsd_device_info;
struct gsd_snapshot_begin;
struct gsd_snapshot_end;
struct gsd_schedule;
struct gsd_schedule_run;

/* Connects s to url and brings its schema to the current version; with
 * identity (a collector's), also takes that identity and recovers its own
 * in-flight snapshots. */
int gsd_pg_open(struct gsd_store *s, const char *url, const char *identity);
void gsd_pg_close(struct gsd_store *s);
/* Recovers the in-flight snapshots and sessions of collectors that stopped. */
int gsd_pg_recover_stopped(struct gsd_store *s);

int gsd_pg_session_begin(struct gsd_store *s, const struct gsd_device_info *d,
                         const char *address, int64_t *session_id);
int gsd_pg_device_add(struct gsd_store *s, const char *device_id);
int gsd_pg_snapshot_format(struct gsd_store *s, int64_t id, const char *format);
int gsd_pg_session_end(struct gsd_store *s, int64_t session_id, const char *device_id,
                       const char *reason);
int gsd_pg_find_complete(struct gsd_store *s, const char *device_id, uint64_t agent_id,
                         int64_t *id);
int gsd_pg_snapshot_begin(struct gsd_store *s, const struct gsd_snapshot_begin *b, int64_t *id);
int gsd_pg_snapshot_end(struct gsd_store *s, int64_t id, const char *status, const char *reason,
                        const struct gsd_snapshot_end *e, int summary_fields);
uint64_t gsd_pg_max_request_id(struct gsd_store *s);
int gsd_pg_request_issued(struct gsd_store *s, uint64_t *id);
int gsd_pg_mark_damaged(struct gsd_store *s, int64_t id, const char *why);
int gsd_pg_list_snapshots(struct gsd_store *s, const char *device_id, const char *status,
                          uint64_t limit, json_t **out);
int gsd_pg_get_snapshot(struct gsd_store *s, int64_t id, int with_summary, json_t **out,
                        char **path);
int gsd_pg_list_devices(struct gsd_store *s, json_t **out);
int gsd_pg_device_known(struct gsd_store *s, const char *device_id);

int gsd_pg_schedule_add(struct gsd_store *s, struct gsd_schedule *sch);
int gsd_pg_schedule_remove(struct gsd_store *s, int64_t id);
int gsd_pg_schedules(struct gsd_store *s, struct gsd_schedule **out, size_t *n);
int gsd_pg_schedule_runs(struct gsd_store *s, struct gsd_schedule_run **out, size_t *n);
int gsd_pg_schedule_ran(struct gsd_store *s, int64_t schedule_id, const char *device_id,
                        int64_t ms);
int gsd_pg_schedule_claim(struct gsd_store *s, int64_t schedule_id, const char *device_id,
                          int64_t due_ms, int64_t ms);
int gsd_pg_retain(struct gsd_store *s, const char *device_id, uint64_t keep, uint64_t max_bytes,
                  unsigned *removed);

int gsd_pg_key_count(struct gsd_store *s, uint64_t *n);
int gsd_pg_key_verifier(struct gsd_store *s, const char *device_id, uint8_t *verifier,
                        size_t len);
int gsd_pg_key_set(struct gsd_store *s, const char *device_id, const uint8_t *verifier,
                   size_t len, int replace);
int gsd_pg_key_remove(struct gsd_store *s, const char *device_id);
int gsd_pg_list_keys(struct gsd_store *s, json_t **out);

#endif
