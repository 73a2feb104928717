/* gsf_v8.c - V8 heap snapshots (.heapsnapshot) as records: the JSON side.
 *
 * V8 writes snapshot.meta, then "nodes" (a flat array of numbers, node
 * after node), then "edges" (each node's edges in node order), then
 * "strings" last. This side follows the JSON's structure and hands each
 * value that matters to the heap side (gsf_v8heap.c), which keeps the
 * nodes and writes the records.
 *
 * The nodes and edges are nearly all of a snapshot's bytes, and a JSON
 * tokenizer spends most of its time on them: yajl reads everything up to
 * the bracket that opens either array, then the numbers are read by
 * gsf_numlist, and yajl takes over again from the bracket that closes it
 * (an empty array to yajl). The locations, after the edges, are passed
 * over the same way. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gs_text.h"
#include "gsf_v8.h"
#include "gsf_v8_int.h"

#define BLOCK (64u << 10)
/* Bytes of a JSON string handed to yajl; past them the rest of the string
 * is dropped. yajl lexes a string again from its start each time more of
 * it comes, so a string of many blocks would cost their square (a 300 MB
 * one took minutes), and no string needs more: a name is cut at
 * GSF_NAME_MAX bytes, which take at most six times as many in JSON. */
#define MAX_STRING BLOCK

static size_t skip_blanks(const unsigned char *head, size_t i, size_t n) {
  while (i < n && strchr(" \t\r\n", head[i]) && head[i]) i++;
  return i;
}

size_t gsf_v8_json_start(const unsigned char *head, size_t n) {
  return skip_blanks(head, gs_utf8_bom(head, n), n);
}

int gsf_v8_sniff(const unsigned char *head, size_t n) {
  static const char key[] = "\"snapshot\"";
  size_t i = gsf_v8_json_start(head, n);
  if (i >= n || head[i++] != '{') return 0;
  i = skip_blanks(head, i, n);
  return n - i >= sizeof key - 1 && memcmp(head + i, key, sizeof key - 1) == 0;
}

/* ---- errors ------------------------------------------------------------ */

static uint64_t offset(const v8 *p) {
  return p->numbers || p->in_locations ? p->at : p->base + yajl_get_bytes_consumed(p->h);
}

int gsf_v8_bad(v8 *p, const char *fmt, ...) {
  va_list ap;
  int n = snprintf(p->err, p->errcap, "byte %llu: ", (unsigned long long)offset(p));
  p->rc = GS_EFORMAT;
  if (n < 0 || (size_t)n >= p->errcap) return 0;
  va_start(ap, fmt);
  vsnprintf(p->err + n, p->errcap - (size_t)n, fmt, ap);
  va_end(ap);
  return 0;
}

int gsf_v8_failed(v8 *p, int rc) {
  if (rc == GS_ENOMEM)
    snprintf(p->err, p->errcap, "out of memory at byte %llu", (unsigned long long)offset(p));
  else if (rc == GS_ELIMIT)
    snprintf(p->err, p->errcap, "byte %llu: an object has more than %lu references (" GSF_ONE_OBJECT_LIMIT ")",
             (unsigned long long)offset(p), (unsigned long)gs_writer_max_refs(p->w));
  else
    snprintf(p->err, p->errcap, "byte %llu: cannot write the records", (unsigned long long)offset(p));
  p->rc = rc;
  return 0;
}

/* ---- JSON structure ---------------------------------------------------- */

/* The context of a value opening in the current container. */
static json_ctx child_ctx(v8 *p) {
  json_ctx c = p->stack[p->depth];
  uint32_t index = p->elems[p->depth]++;
  switch (c) {
  case C_TOP: case C_SNAPSHOT: case C_META: return p->pending;
  case C_NODE_TYPES: return index == 0 ? C_NODE_TYPE_LIST : C_SKIP;
  case C_EDGE_TYPES: return index == 0 ? C_EDGE_TYPE_LIST : C_SKIP;
  default: return C_SKIP;
  }
}

static int open_value(v8 *p, json_ctx c) {
  if (p->depth == MAX_DEPTH) return gsf_v8_bad(p, "JSON nested deeper than %u levels", MAX_DEPTH);
  p->stack[++p->depth] = (unsigned char)c;
  p->elems[p->depth] = 0;
  p->pending = C_SKIP;
  if (c == C_NODES) {
    if (p->phase != 0 && p->phase != 1) return gsf_v8_bad(p, "\"nodes\" comes twice or after the edges");
    p->pos = 0;
    return gsf_v8_meta_done(p);
  }
  if (c == C_EDGES) {
    if (p->phase != 1) return gsf_v8_bad(p, "\"edges\" does not follow \"nodes\"");
    if (p->pos) return gsf_v8_bad(p, "the nodes end inside a node");
    p->phase = 2;
    p->enode = NONE;
    p->eleft = 0;
    return 1;
  }
  if (c != C_STRINGS) return 1;
  p->past_locations = 1;
  return gsf_v8_strings_start(p);
}

static int on_start(void *ctx) {
  v8 *p = ctx;
  if (p->depth == 0) return open_value(p, C_TOP);
  if (p->stack[p->depth] != C_SKIP) return open_value(p, child_ctx(p));
  if (p->skipped == MAX_SKIPPED_DEPTH)
    return gsf_v8_bad(p, "JSON nested deeper than %u levels in a value read past", MAX_SKIPPED_DEPTH);
  p->skipped++;
  return 1;
}

static int on_end(void *ctx) {
  v8 *p = ctx;
  json_ctx c;
  if (p->skipped) {
    p->skipped--;
    return 1;
  }
  c = p->stack[p->depth--];
  if (c == C_EDGES) {
    if (p->pos) return gsf_v8_bad(p, "the edges end inside an edge");
    return gsf_v8_edges_end(p);
  }
  if (c == C_STRINGS && p->phase == 3) return gsf_v8_finish(p);
  return 1;
}

static int on_key(void *ctx, const unsigned char *s, size_t n) {
  static const struct { json_ctx in; const char *key; json_ctx value; } keys[] = {
    {C_TOP, "snapshot", C_SNAPSHOT}, {C_TOP, "nodes", C_NODES}, {C_TOP, "edges", C_EDGES},
    {C_TOP, "locations", C_LOCATIONS}, {C_TOP, "strings", C_STRINGS}, {C_SNAPSHOT, "meta", C_META},
    {C_META, "node_fields", C_NODE_FIELDS}, {C_META, "node_types", C_NODE_TYPES},
    {C_META, "edge_fields", C_EDGE_FIELDS}, {C_META, "edge_types", C_EDGE_TYPES},
  };
  v8 *p = ctx;
  size_t i;
  p->pending = C_SKIP;
  for (i = 0; i < sizeof keys / sizeof keys[0]; i++)
    if (keys[i].in == p->stack[p->depth] && gsf_v8_field_is((const char *)s, n, keys[i].key))
      p->pending = keys[i].value;
  return 1;
}

/* A scalar where a list is expected (e.g. "nodes": 5) leaves that part
 * unread, which gsf_v8_finish reports. */
static int on_scalar(void *ctx) {
  v8 *p = ctx;
  if (p->depth) child_ctx(p);
  return 1;
}
static int on_null(void *ctx) { return on_scalar(ctx); }
static int on_bool(void *ctx, int b) { (void)b; return on_scalar(ctx); }

static int on_number_value(void *ctx, const char *s, size_t n) {
  v8 *p = ctx;
  json_ctx c = p->stack[p->depth];
  if (c == C_NODES || c == C_EDGES) return gsf_v8_number_text(p, s, n);
  return on_scalar(ctx);
}

static int on_string_value(void *ctx, const unsigned char *s, size_t n) {
  v8 *p = ctx;
  json_ctx c = p->stack[p->depth];
  if (p->depth) child_ctx(p);
  if (c == C_TOP || c == C_SNAPSHOT || c == C_META) return 1;
  if (c == C_NODES || c == C_EDGES)
    return gsf_v8_bad(p, "a string among the %s", c == C_NODES ? "nodes" : "edges");
  return gsf_v8_string(p, s, n);
}

static const yajl_callbacks callbacks = {
  on_null, on_bool, NULL, NULL, on_number_value, on_string_value,
  on_start, on_key, on_end, on_start, on_end,
};

/* ---- the parse --------------------------------------------------------- */

static int parse_error(v8 *p, const unsigned char *buf, size_t n, int at_end) {
  unsigned char *msg;
  size_t len;
  /* At the end, a number cut short may have been taken whole first. */
  if (p->rc && (!at_end || p->rc != GS_EFORMAT)) return p->rc;
  if (at_end) {
    snprintf(p->err, p->errcap, "the file ends at byte %llu inside the JSON (truncated file?)",
             (unsigned long long)p->base);
    return GS_EFORMAT;
  }
  msg = yajl_get_error(p->h, 0, buf, n);
  len = msg ? strcspn((const char *)msg, "\r\n") : 0;
  snprintf(p->err, p->errcap, "byte %llu: JSON: %.*s", (unsigned long long)offset(p),
           (int)(len ? len : 12), len ? (const char *)msg : "syntax error");
  if (msg) yajl_free_error(p->h, msg);
  return GS_EFORMAT;
}

/* The key whose array is read apart next, if any. */
static const char *next_key(const v8 *p) {
  if (p->phase == 0) return "\"nodes\"";
  if (p->phase == 1) return "\"edges\"";
  /* From the edges' end on: yajl may not have read their bracket yet. */
  return p->phase >= 2 && !p->past_locations ? "\"locations\"" : NULL;
}

/* How much of buf yajl reads next: up to the bracket after the key of the
 * nodes (before them), of the edges (after the nodes) or of the locations
 * (after the edges), *at_array set; else all of it. */
static size_t yajl_part(const v8 *p, const unsigned char *buf, size_t n, int *at_array) {
  const char *key = next_key(p);
  size_t len = key ? strlen(key) : 0;
  const unsigned char *q = buf, *end = buf + n;
  *at_array = 0;
  while (key && (q = memchr(q, '"', (size_t)(end - q))) != NULL) {
    const unsigned char *r = q + len;
    if ((size_t)(end - q) >= len && memcmp(q, key, len) == 0) {
      while (r < end && gsf_numlist_blank(*r)) r++;
      if (r < end && *r++ == ':') {
        while (r < end && gsf_numlist_blank(*r)) r++;
        if (r < end && *r == '[') {
          *at_array = 1;
          return (size_t)(r + 1 - buf);
        }
      }
    }
    q++;
  }
  return n;
}

/* Reads as many bytes of the numbers as buf holds, up to the bracket that
 * ends them (left to yajl). */
static size_t numbers_part(v8 *p, const unsigned char *buf, size_t n) {
  size_t used;
  int rc = gsf_numlist_read(&p->list, buf, n, &used, gsf_v8_number, p);
  p->at = p->base + used;
  if (rc == GSF_NUMLIST_END) {
    gsf_v8_numbers_end(p);     /* the edges still waiting, at their bytes */
    p->numbers = 0;
  } else if (rc == GSF_NUMLIST_NOT_WHOLE) gsf_v8_not_whole(p);
  else if (rc == GSF_NUMLIST_MISSING) gsf_v8_bad(p, "JSON: a number is missing");
  else if (rc == GSF_NUMLIST_NO_COMMA) gsf_v8_bad(p, "JSON: a comma is missing between two numbers");
  return used;
}

/* Reads past the numbers of the locations (four a closure: where its code
 * is), which nothing uses, up to the bracket that ends them (left to yajl).
 * Their bytes are only checked to be those of numbers. */
static size_t locations_part(v8 *p, const unsigned char *buf, size_t n) {
  static const unsigned char number_byte[256] = {
    ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1,
    ['8'] = 1, ['9'] = 1, [','] = 1, ['-'] = 1, ['+'] = 1, ['.'] = 1, ['e'] = 1, ['E'] = 1,
    [' '] = 1, ['\t'] = 1, ['\r'] = 1, ['\n'] = 1,
  };
  size_t i = 0;
  while (i < n && number_byte[buf[i]]) i++;
  p->at = p->base + i;
  if (i < n && buf[i] == ']') p->in_locations = 0;
  else if (i < n) gsf_v8_bad(p, "JSON: something other than a number among the locations");
  return i;
}

/* Whether the byte c, read by yajl, goes to it: not when it is in the end
 * of a string past MAX_STRING bytes. The string is cut before a character
 * and outside an escape, so what yajl gets stays valid JSON. */
static int string_byte(v8 *p, unsigned char c) {
  if (p->escape) {
    p->escape = p->escape == 1 && c == 'u' ? 4 : p->escape - 1;
  } else if (!p->in_string) {
    p->in_string = c == '"';
    p->string_len = 0;
    return 1;
  } else if (c == '"') {
    p->in_string = p->clipping = 0;
    return 1;
  } else if (c == '\\') {
    p->escape = 1;
  } else if (!p->clipping && p->string_len >= MAX_STRING && (c & 0xc0) != 0x80) {
    p->clipping = 1;
  }
  p->string_len++;
  return !p->clipping;
}

/* How many bytes from b on (at most n) string_byte would keep without a
 * change: a string's short of MAX_STRING, up to a quote or backslash, or
 * the JSON's between strings up to a quote. Counts them in. */
static size_t plain_run(v8 *p, const unsigned char *b, size_t n) {
  size_t i = 0;
  if (p->escape || p->clipping || (p->in_string && p->string_len >= MAX_STRING)) return 0;
  if (!p->in_string) {
    while (i < n && b[i] != '"') i++;
    return i;
  }
  if (n > MAX_STRING - p->string_len) n = MAX_STRING - p->string_len;
  while (i < n && b[i] != '"' && b[i] != '\\') i++;
  p->string_len += i;
  return i;
}

/* yajl_parse of buf[0..n) but for the ends of long strings, with p->base
 * at each part given to yajl while it reads it, for the errors' bytes. */
static int yajl_feed(v8 *p, const unsigned char *buf, size_t n) {
  size_t i, from = 0;
  int kept = 1;
  for (i = 0; i <= n; i++) {
    int keep;
    if (i < n) i += plain_run(p, buf + i, n - i);
    keep = i < n ? string_byte(p, buf[i]) : !kept;
    if (keep == kept) continue;
    if (kept) {
      p->base += from;
      if (yajl_parse(p->h, buf + from, i - from) != yajl_status_ok)
        return parse_error(p, buf + from, i - from, 0);
      p->base -= from;
    }
    from = i;
    kept = keep;
  }
  return GS_OK;
}

/* Hands buf to yajl, the numbers of the nodes and edges excepted. */
static int feed(v8 *p, const unsigned char *buf, size_t n) {
  while (n) {
    size_t len;
    int at_array, rc;
    if (p->numbers || p->in_locations) {
      len = p->numbers ? numbers_part(p, buf, n) : locations_part(p, buf, n);
      if (p->rc) return p->rc;
    } else {
      len = yajl_part(p, buf, n, &at_array);
      if ((rc = yajl_feed(p, buf, len)) != GS_OK) return rc;
      if (at_array && (p->stack[p->depth] == C_NODES || p->stack[p->depth] == C_EDGES)) {
        p->numbers = 1;
        gsf_numlist_start(&p->list);
      } else if (at_array && p->stack[p->depth] == C_LOCATIONS) {
        p->in_locations = p->past_locations = 1;
      }
    }
    p->base += len;
    buf += len;
    n -= len;
  }
  return GS_OK;
}

/* The byte order mark some Windows tools put first, which gsf_v8_sniff
 * lets pass: bytes of buf[0..n) to skip at the start of the input. */
static size_t bom(const v8 *p, const unsigned char *buf, size_t n) {
  return p->base == 0 ? gs_utf8_bom(buf, n) : 0;
}

static int parse(v8 *p, gs_read_fn in, void *in_ctx) {
  unsigned char *buf = malloc(BLOCK);
  int rc = GS_OK;
  if (!buf) return gsf_v8_failed(p, GS_ENOMEM), GS_ENOMEM;
  for (;;) {
    size_t got = 0, skip;
    if ((rc = in(in_ctx, buf, BLOCK, &got))) {
      snprintf(p->err, p->errcap, "read error at byte %llu", (unsigned long long)p->base);
      break;
    }
    if (got == 0) {
      if (p->numbers || p->in_locations || yajl_complete_parse(p->h) != yajl_status_ok)
        rc = parse_error(p, buf, 0, 1);
      break;
    }
    skip = bom(p, buf, got);
    p->base += skip;
    if ((rc = feed(p, buf + skip, got - skip)) != GS_OK) break;
  }
  free(buf);
  if (!rc && p->phase != 4) {
    snprintf(p->err, p->errcap, "byte %llu: the JSON is not a whole heap snapshot",
             (unsigned long long)p->base);
    rc = GS_EFORMAT;
  }
  return rc;
}

int gsf_v8_convert(gs_read_fn in, void *in_ctx, gs_writer *w, char *err, size_t cap) {
  v8 *p = calloc(1, sizeof *p);
  int rc;
  if (cap) err[0] = '\0';
  if (!p) { snprintf(err, cap, "out of memory"); return GS_ENOMEM; }
  p->w = w;
  p->err = err;
  p->errcap = cap;
  p->f_type = p->f_name = p->f_id = p->f_size = p->f_edges = p->f_detached = -1;
  p->e_type = p->e_to = -1;
  p->synthetic = p->native = p->weak = p->hidden = p->invisible = p->shortcut = p->internal = -1;
  if (!(p->h = yajl_alloc(&callbacks, NULL, p))) {
    free(p);
    snprintf(err, cap, "out of memory");
    return GS_ENOMEM;
  }
  if ((rc = gs_writer_section(w, 2, "heapsnapshot", 12, 0)) == GS_OK) rc = parse(p, in, in_ctx);
  yajl_free(p->h);
  free(p->nodes);
  free(p->wide);
  free(p->types);
  free(p->refs);
  free(p->later);
  free(p->kept);
  free(p->weak_to);
  free(p->weak_list);
  free(p->want);
  free(p->info);
  free(p);
  return rc;
}
