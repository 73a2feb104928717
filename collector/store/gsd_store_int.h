/* gsd_store_int.h - what the files of the store share (gsd_store.c,
 * gsd_store_snapshots.c, gsd_store_schedules.c, gsd_store_keys.c): the
 * handle and the statement helpers. Not for use outside store/. */
#ifndef GSD_STORE_INT_H
#define GSD_STORE_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>
#include <sqlite3.h>
#include "gsd_store.h"
#include "gsd_pg.h"

struct gsd_store {
  sqlite3 *db;
  struct gsd_pg *pg;              /* a PostgreSQL catalog instead of db (gsd_pg.h) */
  char *dir;
  int lock;                  /* gsd_lock's, held while open; -1 for gcsnap keys */
  dev_t catalog_dev;         /* the catalog file opened, to notice it replaced */
  ino_t catalog_ino;
  char error[512];
};

/* The columns of a snapshot row as the API shows them. */
#define SNAPSHOT_COLUMNS \
  "id, device_id, created, status, reason, request_id, agent_snapshot_id, trigger," \
  " stable_ids, schedule_id, objects, bytes, refs AS \"references\", roots, types, unreachable," \
  " dangling_references, sections, text_bytes, file_bytes, wire_bytes, crc32, source_format," \
  " note, damaged, summary"

/* Sets the store's error (printf-style); returns GS_EIO. */
int gsd_st_fail(gsd_store *s, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 2, 3)))
#endif
  ;
/* "catalog: WHAT: SQLite's message"; returns GS_EIO. */
int gsd_st_db_fail(gsd_store *s, const char *what);
int64_t gsd_st_now_s(void);
int gsd_st_make_dir(gsd_store *s, const char *path);
int gsd_st_make_device_dir(gsd_store *s, const char *device_id);

/* A statement, or NULL with the error set. */
sqlite3_stmt *gsd_st_prepare(gsd_store *s, const char *sql);
/* NULL binds SQL NULL. */
void gsd_st_bind_text(sqlite3_stmt *st, int i, const char *v);
/* Unsigned 64-bit values are kept in SQLite's signed integers bit for bit. */
void gsd_st_bind_u64(sqlite3_stmt *st, int i, uint64_t v);
/* Steps a statement that returns no rows, and finalizes it. */
int gsd_st_run_stmt(gsd_store *s, sqlite3_stmt *st, const char *what);
int gsd_st_exec(gsd_store *s, const char *sql, const char *what);
/* gsd_st_run_stmt without a sync before the next synced commit. */
int gsd_st_run_unsynced(gsd_store *s, sqlite3_stmt *st, const char *what);

/* Removes the files queued in the removals table, and empties it. */
int gsd_st_drain_removals(gsd_store *s);
/* GS_OK while the catalog file is the one opened; else GS_EIO with the
 * error set (it was removed or replaced while gcsnapd ran). */
int gsd_st_check_catalog(gsd_store *s);
/* Removes a snapshot's file and what the collector keeps beside it (its
 * generation ranges, PATH.gens.json); unlink()'s result for the file. */
int gsd_st_unlink_snapshot(const char *path);
/* A snapshot left in flight: its temporary file, its final file and side
 * file if it got that far, and the side file's temporaries. */
void gsd_st_unlink_inflight(gsd_store *s, const char *device_id, int64_t id);

/* One column as JSON: NULL as null, numbers as unsigned, the rest as text. */
json_t *gsd_st_column_json(sqlite3_stmt *st, int i);
/* The row as an object of its columns; the summary column (parsed) only
 * with with_summary. NULL when out of memory. */
json_t *gsd_st_snapshot_json(sqlite3_stmt *st, int with_summary);
int gsd_st_rows_json(gsd_store *s, sqlite3_stmt *st, int with_summary, const char *what,
                     json_t **out);

#endif
