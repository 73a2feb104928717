/* gs_table.c - text tables for the commands that list things. */
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gs_table.h"

void gs_table_init(gs_table *t, size_t ncols, const char *const *heads, const char *align) {
  memset(t, 0, sizeof *t);
  t->ncols = ncols;
  t->heads = heads;
  t->align = align;
}

static char *copy(const char *s) {
  size_t n;
  char *p;
  if (!s) s = "-";
  n = strlen(s) + 1;
  if ((p = malloc(n))) memcpy(p, s, n);
  return p;
}

int gs_table_add(gs_table *t, const char *const *cells) {
  size_t i, base;
  if ((t->nrows + 1) * t->ncols > t->cap) {
    size_t cap = t->cap ? t->cap * 2 : t->ncols * 16;
    char **p = realloc(t->cells, cap * sizeof *p);
    if (!p) return GS_ENOMEM;
    t->cells = p;
    t->cap = cap;
  }
  base = t->nrows * t->ncols;
  for (i = 0; i < t->ncols; i++) {
    if (!(t->cells[base + i] = copy(cells[i]))) {
      while (i-- > 0) free(t->cells[base + i]);
      return GS_ENOMEM;
    }
  }
  t->nrows++;
  return GS_OK;
}

/* One line; built whole so that blanks at its end can be dropped. */
static void print_row(const gs_table *t, FILE *out, const size_t *width,
                      const char *const *cells, char *line) {
  size_t i, n = 0;
  for (i = 0; i < t->ncols; i++) {
    size_t len = strlen(cells[i]), pad = width[i] > len ? width[i] - len : 0;
    if (i > 0) { memcpy(line + n, "  ", 2); n += 2; }
    if (t->align[i] == 'r') { memset(line + n, ' ', pad); n += pad; }
    memcpy(line + n, cells[i], len);
    n += len;
    if (t->align[i] != 'r') { memset(line + n, ' ', pad); n += pad; }
  }
  while (n > 0 && line[n - 1] == ' ') n--;
  line[n] = '\0';
  fprintf(out, "%s\n", line);
}

int gs_table_print(const gs_table *t, FILE *out) {
  size_t *width = calloc(t->ncols, sizeof *width), r, i, total = 1;
  char *line;
  if (!width) return GS_ENOMEM;
  for (i = 0; i < t->ncols; i++) width[i] = strlen(t->heads[i]);
  for (r = 0; r < t->nrows; r++)
    for (i = 0; i < t->ncols; i++) {
      size_t n = strlen(t->cells[r * t->ncols + i]);
      if (n > width[i]) width[i] = n;
    }
  for (i = 0; i < t->ncols; i++) total += width[i] + 2;
  if (!(line = malloc(total))) { free(width); return GS_ENOMEM; }
  print_row(t, out, width, t->heads, line);
  for (r = 0; r < t->nrows; r++)
    print_row(t, out, width, (const char *const *)&t->cells[r * t->ncols], line);
  free(line);
  free(width);
  return GS_OK;
}

void gs_table_free(gs_table *t) {
  size_t i;
  for (i = 0; i < t->nrows * t->ncols; i++) free(t->cells[i]);
  free(t->cells);
  memset(t, 0, sizeof *t);
}
