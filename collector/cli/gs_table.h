/* gs_table.h - text tables for the commands that list things.
 *
 * Rows are added as strings; columns are as wide as their widest cell, so
 * the whole table is kept until it is printed, unless its rows can be made
 * again (gs_table_print_rows). Numbers are right-aligned,
 * text left-aligned; the last column is not padded.
 *
 * Cells often hold names from a dump or from the collector (type names,
 * device IDs), which anyone could have written: they are escaped for the
 * terminal (gs_table_escape), so that a name cannot move the cursor,
 * change colours or rewrite what was printed before. */
#ifndef GS_TABLE_H
#define GS_TABLE_H

#include <stddef.h>
#include <stdio.h>

#define GS_TABLE_MAX_COLS 16      /* columns a table has at most */

typedef struct gs_table {
  size_t ncols;
  const char *const *heads;
  const char *align;        /* one letter per column: 'l' or 'r' */
  char **cells;             /* nrows * ncols copies */
  size_t nrows, cap;
} gs_table;

void gs_table_init(gs_table *t, size_t ncols, const char *const *heads, const char *align);
/* Copies ncols cells; NULL cells print as "-". Returns GS_OK or GS_ENOMEM. */
int gs_table_add(gs_table *t, const char *const *cells);
/* Returns GS_OK or GS_ENOMEM. */
int gs_table_print(const gs_table *t, FILE *out);
/* Prints t's heads over nrows rows that are not kept but made on demand,
 * for lists as long as a heap: fn sets ncols cells of row r (NULL prints
 * as "-"), which stay valid until its next call, and returns GS_OK or an
 * error, which stops the printing. It is called twice a row, once to size
 * the columns and once to print. */
typedef int (*gs_table_row_fn)(void *ctx, size_t r, const char **cells);
int gs_table_print_rows(const gs_table *t, size_t nrows, gs_table_row_fn fn, void *ctx, FILE *out);
void gs_table_free(gs_table *t);

/* s as it may be shown on a terminal: control characters (C0, DEL, and C1
 * in UTF-8), bytes that are not UTF-8, and the bidirectional and line
 * separator marks (U+202A-U+202E, U+2066-U+2069, U+2028, U+2029) as \xNN
 * per byte, and '\\' as "\\\\"; other text as it is. Returns a malloc'd
 * string, or NULL when out of memory. */
char *gs_table_escape(const char *s);
/* Writes s escaped as above; returns GS_OK or GS_ENOMEM. */
int gs_table_fputs(const char *s, FILE *out);

#endif
