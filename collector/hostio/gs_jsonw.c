/* gs_jsonw.c - JSON made a member at a time (see gs_jsonw.h).
 *
 * Printing lays members out as jansson's JSON_INDENT(2) does: each on a
 * line of its own, indented two blanks a level, an empty container as []
 * or {}. A value jansson prints over several lines has the member's
 * indentation added after each of its newlines. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gs_json.h"
#include "gs_jsonw.h"

#define MAX_DEPTH 16
#define DUMP_FLAGS (GS_JSON_PRINT_FLAGS | JSON_ENCODE_ANY)

struct gs_jsonw {
  FILE *out;                   /* NULL: builds */
  int err;
  int wrote;                   /* printing: something was */
  int depth;
  int empty[MAX_DEPTH];        /* printing: the open container has no member yet */
  char close[MAX_DEPTH];
  json_t *open[MAX_DEPTH + 1]; /* building: the open containers */
};

static gs_jsonw *new_writer(FILE *out) {
  gs_jsonw *w = calloc(1, sizeof *w);
  if (w) w->out = out;
  return w;
}

gs_jsonw *gs_jsonw_print(FILE *out) { return new_writer(out); }
gs_jsonw *gs_jsonw_build(void) { return new_writer(NULL); }

/* ---- printing --------------------------------------------------------- */

static void put(gs_jsonw *w, const char *s, size_t n) {
  if (!w->err && fwrite(s, 1, n, w->out) != n) w->err = GS_EIO;
  w->wrote = 1;
}

static void indent(gs_jsonw *w, int depth) {
  static const char blanks[] = "                                ";
  put(w, "\n", 1);
  put(w, blanks, (size_t)depth * 2 < sizeof blanks - 1 ? (size_t)depth * 2 : sizeof blanks - 1);
}

/* jansson's text of a value, each of its newlines indented to w's depth. */
static int put_indented(const char *buf, size_t size, void *data) {
  gs_jsonw *w = data;
  const char *nl;
  while ((nl = memchr(buf, '\n', size)) != NULL) {
    put(w, buf, (size_t)(nl - buf));
    indent(w, w->depth);
    size -= (size_t)(nl - buf) + 1;
    buf = nl + 1;
  }
  put(w, buf, size);
  return w->err ? -1 : 0;
}

static void put_value(gs_jsonw *w, const json_t *v) {
  if (!w->err && json_dump_callback(v, put_indented, w, DUMP_FLAGS) != 0 && !w->err) w->err = GS_ENOMEM;
}

/* The start of a member: its separator, line and key. */
static void begin_member(gs_jsonw *w, const char *key) {
  json_t *k;
  if (w->depth) {
    if (!w->empty[w->depth - 1]) put(w, ",", 1);
    w->empty[w->depth - 1] = 0;
    indent(w, w->depth);
  }
  if (!key) return;
  if (!(k = json_string(key))) { w->err = w->err ? w->err : GS_ENOMEM; return; }
  put_value(w, k);
  json_decref(k);
  put(w, ": ", 2);
}

/* ---- building --------------------------------------------------------- */

static void attach(gs_jsonw *w, const char *key, json_t *v) {
  json_t *parent = w->depth ? w->open[w->depth - 1] : NULL;
  int bad;
  if (!parent) {
    assert(!w->open[MAX_DEPTH]);
    w->open[MAX_DEPTH] = v;   /* the document */
    return;
  }
  bad = key ? json_object_set_new(parent, key, v) : json_array_append_new(parent, v);
  if (bad) w->err = GS_ENOMEM;
}

/* ---- members ---------------------------------------------------------- */

static void open_container(gs_jsonw *w, const char *key, json_t *made, const char *text) {
  assert(w->depth < MAX_DEPTH);
  if (w->err) { json_decref(made); return; }
  if (w->out) {
    json_decref(made);
    begin_member(w, key);
    put(w, text, 1);
    w->empty[w->depth] = 1;
    w->close[w->depth++] = text[0] == '{' ? '}' : ']';
    return;
  }
  if (!made) { w->err = GS_ENOMEM; return; }
  attach(w, key, json_incref(made));
  w->open[w->depth++] = made;
}

void gs_jsonw_object(gs_jsonw *w, const char *key) {
  open_container(w, key, w->out ? NULL : json_object(), "{");
}

void gs_jsonw_array(gs_jsonw *w, const char *key) {
  open_container(w, key, w->out ? NULL : json_array(), "[");
}

void gs_jsonw_end(gs_jsonw *w) {
  if (w->err) return;
  assert(w->depth > 0);
  w->depth--;
  if (!w->out) {
    json_decref(w->open[w->depth]);
    return;
  }
  if (!w->empty[w->depth]) indent(w, w->depth);
  put(w, &w->close[w->depth], 1);
}

void gs_jsonw_value(gs_jsonw *w, const char *key, json_t *value) {
  if (!value && !w->err) w->err = GS_ENOMEM;
  if (w->err) { json_decref(value); return; }
  if (!w->out) { attach(w, key, value); return; }
  begin_member(w, key);
  put_value(w, value);
  json_decref(value);
}

int gs_jsonw_finish(gs_jsonw *w, json_t **built) {
  int err;
  if (built) *built = NULL;
  if (!w) return GS_ENOMEM;
  if (w->out && w->wrote) put(w, "\n", 1);
  if (w->out && !w->err && fflush(w->out)) w->err = GS_EIO;
  err = w->err;
  if (built && !err) *built = w->open[MAX_DEPTH];
  else json_decref(w->open[MAX_DEPTH]);
  while (w->depth > 0 && !w->out) json_decref(w->open[--w->depth]);
  free(w);
  return err;
}
