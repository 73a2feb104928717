/* gs_table.h - text tables for the commands that list things.
 *
 * Rows are added as strings; columns are as wide as their widest cell, so
 * the whole table is kept until it is printed. Numbers are right-aligned,
 * text left-aligned; the last column is not padded. */
#ifndef GS_TABLE_H
#define GS_TABLE_H

#include <stddef.h>
#include <stdio.h>

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
void gs_table_free(gs_table *t);

#endif
