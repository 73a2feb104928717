/* gsd_pg_int.h - what the PostgreSQL catalog's files share (gsd_pg.c,
 * gsd_pg_snapshots.c, gsd_pg_schedules.c): the connection, parameters as
 * text, and results as JSON. Not for use outside store/. */
#ifndef GSD_PG_INT_H
#define GSD_PG_INT_H

#include <stdint.h>
#include <libpq-fe.h>
#include "gsd_store_int.h"

/* The most parameters of one statement. */
#define GSD_PG_MAX_ARGS 24

/* The libpq functions the catalog calls, by their names without "PQ":
 * bound by gsd_pg_open when a store is first opened on PostgreSQL, so
 * that the programs linking the store load libpq only then (gs_dl.h). */
typedef struct gsd_libpq_api {
  PGconn *(*connectdb)(const char *conninfo);
  ConnStatusType (*status)(const PGconn *conn);
  char *(*errorMessage)(const PGconn *conn);
  void (*reset)(PGconn *conn);
  void (*finish)(PGconn *conn);
  PGresult *(*exec)(PGconn *conn, const char *query);
  PGresult *(*execParams)(PGconn *conn, const char *command, int nParams, const Oid *paramTypes,
                          const char *const *paramValues, const int *paramLengths,
                          const int *paramFormats, int resultFormat);
  ExecStatusType (*resultStatus)(const PGresult *res);
  char *(*resultErrorMessage)(const PGresult *res);
  char *(*cmdTuples)(PGresult *res);
  int (*ntuples)(const PGresult *res);
  int (*nfields)(const PGresult *res);
  char *(*fname)(const PGresult *res, int field_num);
  Oid (*ftype)(const PGresult *res, int field_num);
  char *(*getvalue)(const PGresult *res, int tup_num, int field_num);
  int (*getlength)(const PGresult *res, int tup_num, int field_num);
  int (*getisnull)(const PGresult *res, int tup_num, int field_num);
  unsigned char *(*unescapeBytea)(const unsigned char *strtext, size_t *retbuflen);
  void (*freemem)(void *ptr);
  void (*clear)(PGresult *res);
} gsd_libpq_api;

extern gsd_libpq_api gsd_libpq;

struct gsd_pg {
  PGconn *conn;
  char identity[128];             /* this collector's; "" for gcsnap keys */
};

/* The parameters of a statement, as libpq's text values. */
typedef struct gsd_pg_args {
  const char *v[GSD_PG_MAX_ARGS];
  char num[GSD_PG_MAX_ARGS][24];
  int n;
} gsd_pg_args;

void gsd_pga_text(gsd_pg_args *a, const char *v);     /* NULL is SQL NULL */
void gsd_pga_i64(gsd_pg_args *a, int64_t v);
/* Unsigned 64-bit values are kept in BIGINT bit for bit, as in SQLite. */
void gsd_pga_u64(gsd_pg_args *a, uint64_t v);
/* v, or NULL when v is 0. */
void gsd_pga_opt(gsd_pg_args *a, int64_t v);

/* Runs sql with a's parameters (a may be NULL): the result when it
 * succeeded (PQclear it), else NULL with "catalog: WHAT: message" set. */
PGresult *gsd_pg_query(gsd_store *s, const char *what, const char *sql, const gsd_pg_args *a);
/* The same for a statement whose result is not needed: GS_OK or GS_EIO;
 * *changed (may be NULL) gets the rows it changed. */
int gsd_pg_run(gsd_store *s, const char *what, const char *sql, const gsd_pg_args *a,
               uint64_t *changed);
int64_t gsd_pg_i64(const PGresult *r, int row, int col);   /* NULL is 0 */
/* A zeroed array of one element of size bytes per row of r, for a
 * listing; NULL with *rc GS_EIO when r is NULL (the query failed), or
 * GS_ENOMEM with r cleared. */
void *gsd_pg_array(PGresult *r, size_t size, int *rc);
/* Every row as an object of its columns, as the SQLite catalog gives them;
 * the result is cleared. */
int gsd_pg_rows_json(gsd_store *s, PGresult *r, int with_summary, json_t **out);
json_t *gsd_pg_row_json(const PGresult *r, int row, int with_summary);
/* Ends a transaction: COMMIT when rc is GS_OK, else ROLLBACK; returns rc
 * or the commit's failure. */
int gsd_pg_finish(gsd_store *s, int rc);

#endif
