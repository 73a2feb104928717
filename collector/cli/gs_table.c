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

char *gs_table_escape(const char *s) {
  static const char hex[] = "0123456789abcdef";
  const unsigned char *p = (const unsigned char *)s, *e = p + strlen(s);
  char *out = malloc((size_t)(e - p) * 4 + 1), *q = out;
  if (!out) return NULL;
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

static char *copy(const char *s) {
  return gs_table_escape(s ? s : "-");
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
