/* gs_table.c - text tables for the commands that list things, and the
 * escaping of names for the terminal. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gs_table.h"
#include "gs_text.h"

/* The code point of the n-byte UTF-8 sequence at p (n from gs_utf8_len). */
static unsigned long code_point(const unsigned char *p, size_t n) {
  unsigned long c = n == 1 ? p[0] : p[0] & (0x7fu >> n);
  size_t i;
  for (i = 1; i < n; i++) c = (c << 6) | (p[i] & 0x3fu);
  return c;
}

/* Whether a well-formed character is one a terminal acts on, or one that
 * makes the text shown differ from its order in the line. */
static int is_unsafe(unsigned long c) {
  return c < 0x20 || (c >= 0x7f && c <= 0x9f) || (c >= 0x202a && c <= 0x202e) ||
         (c >= 0x2066 && c <= 0x2069) || c == 0x2028 || c == 0x2029;
}

/* Writes s escaped into out (room for 4 bytes a byte of s, and a NUL). */
static void escape_into(const char *s, char *out) {
  static const char hex[] = "0123456789abcdef";
  const unsigned char *p = (const unsigned char *)s, *e = p + strlen(s);
  char *q = out;
  while (p < e) {
    size_t n = gs_utf8_len(p, e), i;
    if (n == 0 || is_unsafe(code_point(p, n))) {
      if (n == 0) n = 1;
      for (i = 0; i < n; i++) {
        *q++ = '\\';
        *q++ = 'x';
        *q++ = hex[p[i] >> 4];
        *q++ = hex[p[i] & 15];
      }
    } else if (*p == '\\') {
      *q++ = '\\';
      *q++ = '\\';
    } else {
      memcpy(q, p, n);
      q += n;
    }
    p += n;
  }
  *q = '\0';
}

char *gs_table_escape(const char *s) {
  char *out = malloc(strlen(s) * 4 + 1);
  if (out) escape_into(s, out);
  return out;
}

int gs_table_fputs(const char *s, FILE *out) {
  char *e = gs_table_escape(s);
  if (!e) return GS_ENOMEM;
  fputs(e, out);
  free(e);
  return GS_OK;
}

void gs_table_init(gs_table *t, size_t ncols, const char *const *heads, const char *align) {
  memset(t, 0, sizeof *t);
  t->ncols = ncols;
  t->heads = heads;
  t->align = align;
}

/* Kept as given: cells are escaped as they are printed. */
static char *copy(const char *s) {
  return strdup(s ? s : "-");
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
  assert((t->nrows + 1) * t->ncols <= t->cap);
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

/* What printing needs besides the rows: the columns' widths, the cells of
 * the row at hand, escaped, and a line to build. */
typedef struct layout {
  size_t ncols;
  size_t *width;
  char **cells;
  size_t *room;               /* bytes each of cells holds */
  char *line;
} layout;

static void layout_free(layout *l) {
  size_t i;
  for (i = 0; l->cells && i < l->ncols; i++) free(l->cells[i]);
  free(l->width);
  free(l->cells);
  free(l->room);
  free(l->line);
}

#define CELL_ROOM 64

static int layout_init(layout *l, const gs_table *t) {
  size_t i;
  memset(l, 0, sizeof *l);
  l->ncols = t->ncols;
  l->width = calloc(t->ncols, sizeof *l->width);
  l->cells = calloc(t->ncols, sizeof *l->cells);
  l->room = calloc(t->ncols, sizeof *l->room);
  if (!l->width || !l->cells || !l->room) return GS_ENOMEM;
  for (i = 0; i < t->ncols; i++) {
    l->width[i] = strlen(t->heads[i]);
    if (!(l->cells[i] = malloc(CELL_ROOM))) return GS_ENOMEM;
    l->cells[i][0] = '\0';
    l->room[i] = CELL_ROOM;
  }
  return GS_OK;
}

/* Row r, made by fn, escaped into l->cells. */
static int make_row(layout *l, gs_table_row_fn fn, void *ctx, size_t r) {
  const char *cells[GS_TABLE_MAX_COLS] = {NULL};
  size_t i;
  int err = fn(ctx, r, cells);
  for (i = 0; i < l->ncols && !err; i++) {
    const char *c = cells[i] ? cells[i] : "-";
    size_t need = strlen(c) * 4 + 1;
    char *p;
    if (need > l->room[i]) {
      if (!(p = realloc(l->cells[i], need))) return GS_ENOMEM;
      l->cells[i] = p;
      l->room[i] = need;
    }
    escape_into(c, l->cells[i]);
  }
  return err;
}

static void measure(layout *l) {
  size_t i;
  for (i = 0; i < l->ncols; i++) {
    size_t n = strlen(l->cells[i]);
    if (n > l->width[i]) l->width[i] = n;
  }
}

static int make_line(layout *l) {
  size_t i, total = 1;
  for (i = 0; i < l->ncols; i++) total += l->width[i] + 2;
  return (l->line = malloc(total)) ? GS_OK : GS_ENOMEM;
}

int gs_table_print_rows(const gs_table *t, size_t nrows, gs_table_row_fn fn, void *ctx, FILE *out) {
  layout l;
  size_t r;
  int err = layout_init(&l, t);
  assert(t->ncols <= GS_TABLE_MAX_COLS);
  for (r = 0; r < nrows && !err; r++)
    if (!(err = make_row(&l, fn, ctx, r))) measure(&l);
  if (!err && !(err = make_line(&l))) print_row(t, out, l.width, t->heads, l.line);
  for (r = 0; r < nrows && !err; r++)
    if (!(err = make_row(&l, fn, ctx, r))) print_row(t, out, l.width, (const char *const *)l.cells, l.line);
  layout_free(&l);
  return err;
}

static int kept_row(void *ctx, size_t r, const char **cells) {
  const gs_table *t = ctx;
  size_t i;
  for (i = 0; i < t->ncols; i++) cells[i] = t->cells[r * t->ncols + i];
  return GS_OK;
}

int gs_table_print(const gs_table *t, FILE *out) {
  return gs_table_print_rows(t, t->nrows, kept_row, (void *)t, out);
}

void gs_table_free(gs_table *t) {
  size_t i;
  for (i = 0; i < t->nrows * t->ncols; i++) free(t->cells[i]);
  free(t->cells);
  memset(t, 0, sizeof *t);
}
