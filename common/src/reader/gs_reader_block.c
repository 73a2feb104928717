/* gs_reader_block.c - one block of the parsing workers (see
 * gs_reader_ahead.c): read from the source by the worker holding it, cut
 * after its last whole line or, inside an object line too long for a block,
 * at a blank; then parsed in place into a batch of entries. */
#include <stdlib.h>
#include <string.h>
#include "gs_array.h"
#include "gs_error.h"
#include "gs_reader_ahead.h"

static const uint64_t no_refs[1];

/* ---- reading a block (on the worker holding the source) ------------- */

int gs_block_reserve(char **buf, size_t *cap, size_t need) {
  char *p;
  if (need + GS_READER_PAD + 1 <= *cap) return GS_OK;
  if (!(p = realloc(*buf, need + need / 2 + GS_READER_PAD + 1))) return GS_ENOMEM;
  memset(p + *cap, 0, need + need / 2 + GS_READER_PAD + 1 - *cap);
  *buf = p;
  *cap = need + need / 2 + GS_READER_PAD + 1;
  return GS_OK;
}

/* Drops input up to and including the next newline in b[from..*len). */
static void skip_rest(ahead *a, char *b, size_t from, size_t *len) {
  char *nl = memchr(b + from, '\n', *len - from);
  size_t n = nl ? (size_t)(nl + 1 - (b + from)) : *len - from;
  a->skipped_before += n;
  if (!nl) { *len = from; return; }
  memmove(b + from, nl + 1, (size_t)(b + *len - nl - 1));
  *len -= n;
  a->skip_line = 0;
}

/* Reads fresh input into w->block after len bytes, until BLOCK fresh bytes
 * came or the source ended. */
static int read_more(ahead *a, worker *w, size_t *len) {
  gs_reader *r = a->r;
  size_t want = *len + BLOCK;
  int err;
  if ((err = gs_block_reserve(&w->block, &w->block_cap, want))) return err;
  while (*len < want) {
    size_t got = 0, at = *len;
    if ((err = r->fn(r->ctx, w->block + at, want - at, &got))) return err;
    if (got == 0) return GS_EOF;
    *len += got;
    if (a->skip_line) skip_rest(a, w->block, at, len);
  }
  return GS_OK;
}

/* The last newline of b[from..len), or NULL. The bytes of a long line
 * hold none: memchr says so at once. */
static const char *last_newline(const char *b, size_t from, size_t len) {
  if (len <= from || !memchr(b + from, '\n', len - from)) return NULL;
  while (b[len - 1] != '\n') len--;
  return b + len - 1;
}

static int is_blank(char c) { return c == ' ' || c == '\t'; }

/* Bytes of b[0..len) up to the end of an object line's size, or 0. */
static size_t header_end(const char *b, size_t len) {
  size_t i = 0, field;
  for (field = 0; field < 4; field++) {
    while (i < len && is_blank(b[i])) i++;
    if (i == len) return 0;
    while (i < len && !is_blank(b[i])) i++;
  }
  return i;
}

/* Where the len bytes of a block with no newline may be cut so that the
 * next block goes on with the object line they are part of: at the last
 * blank after the object's size (or after the first byte, which is a blank,
 * within a line), or 0 when they may not. */
static size_t cut_point(const ahead *a, const char *b, size_t len) {
  size_t from;
  if (a->in_line) from = 1;
  else if (len > gs_reader_stream_at_(a->r) && gs_reader_object_line_(b, len)) from = header_end(b, len);
  else return 0;
  while (from && len > from && !is_blank(b[len - 1])) len--;
  return from && len > from ? len - 1 : 0;
}

/* Ends the block at the blank at cut, which starts the next one. */
static int cut_block(ahead *a, worker *w, size_t *len, size_t cut, int *open) {
  if (gs_block_reserve(&a->carry, &a->carry_cap, *len - cut)) return a->src_end = GS_ENOMEM;
  memcpy(a->carry, w->block + cut, *len - cut);
  a->carry_len = *len - cut;
  *len = cut;
  a->in_line = *open = 1;
  return 0;
}

int gs_block_take(ahead *a, worker *w, size_t *len, int *open) {
  const char *nl = NULL;
  size_t rest, from, cut;
  int status = 0;
  *len = 0;
  *open = 0;
  if (a->src_end) return a->src_end;
  if (gs_block_reserve(&w->block, &w->block_cap, a->carry_len)) return a->src_end = GS_ENOMEM;
  memcpy(w->block, a->carry, a->carry_len);
  *len = a->carry_len;
  a->carry_len = 0;
  /* The carried bytes hold no newline, but after a long line: only fresh
   * ones are searched. */
  from = a->carry_lines ? 0 : *len;
  a->carry_lines = 0;
  while (!status && !nl) {
    status = read_more(a, w, len);
    nl = last_newline(w->block, from, *len);
    from = *len;
    if (!status && !nl && (cut = cut_point(a, w->block, *len))) return cut_block(a, w, len, cut, open);
    if (!status && !nl && !a->in_line && *len > gs_reader_stream_at_(a->r) &&
        gs_reader_object_line_(w->block, *len))
      return GS_READER_LONG_;
    /* One line (or within one, number) longer than the limit: keep what
     * the parser needs to report it, drop the rest as it comes. */
    if (!status && !nl && *len > a->r->max_line) {
      a->skipped_after = *len - (a->r->max_line + 1 + (size_t)a->in_line);
      *len -= a->skipped_after;
      a->skip_line = a->dropped = 1;
      a->in_line = 0;
      return 0;
    }
  }
  if (nl) a->in_line = 0;
  if (status == GS_EOF) return a->src_end = GS_EOF;
  rest = nl ? (size_t)(w->block + *len - nl - 1) : *len;
  *len -= rest;
  /* An I/O error loses the partial line, as it does on one thread. */
  if (status) return a->src_end = status;
  if (gs_block_reserve(&a->carry, &a->carry_cap, rest)) return a->src_end = GS_ENOMEM;
  memcpy(a->carry, w->block + *len, rest);
  a->carry_len = rest;
  return 0;
}

/* ---- parsing a block ------------------------------------------------- */

/* gs_array_reserve, with the common case (room enough) inline: it runs
 * for every record. */
static int grow(void **arr, size_t *cap, size_t need, size_t elem) {
  return need <= *cap ? GS_OK : gs_array_reserve(arr, cap, need, elem);
}

/* Copies what the record points to into the batch; the references of a
 * batch's first record change places with the parser's instead (a long
 * object's are tens of MB, a block of a longer one's hundreds of KB). */
static inline int keep(batch *b, gs_reader *sub, const gs_record *rec, entry *e) {
  if (!b->nrefs && rec->refs == sub->refs && (rec->nrefs > b->refs_cap || b->rest)) {
    uint64_t *refs = b->refs;
    size_t cap = b->refs_cap;
    b->refs = sub->refs;
    b->refs_cap = sub->refs_cap;
    sub->refs = refs;
    sub->refs_cap = cap;
  } else if (grow((void **)&b->refs, &b->refs_cap, b->nrefs + rec->nrefs, sizeof *b->refs)) {
    return GS_ENOMEM;
  } else if (rec->nrefs) {
    memcpy(b->refs + b->nrefs, rec->refs, rec->nrefs * sizeof *rec->refs);
  }
  e->at = b->nrefs;
  e->n = rec->nrefs;
  b->nrefs += rec->nrefs;
  if (!rec->name) return GS_OK;
  if (grow((void **)&b->names, &b->names_cap, b->names_len + rec->name_len, 1)) return GS_ENOMEM;
  memcpy(b->names + b->names_len, rec->name, rec->name_len);
  e->at = b->names_len;
  e->n = rec->name_len;
  b->names_len += rec->name_len;
  return GS_OK;
}

/* What the kind of record has, into its entry (the parser leaves the other
 * fields as they were). */
static void pack(const gs_record *rec, entry *e) {
  int object = rec->kind == GS_REC_OBJECT, root = rec->kind == GS_REC_ROOT;
  e->kind = (uint8_t)rec->kind;
  e->id = rec->kind == GS_REC_END ? 0 : rec->id;
  e->type = object || rec->has_container ? rec->type : 0;
  e->size = object ? rec->size : rec->has_timestamp ? rec->timestamp : 0;
  e->root_kind = (uint8_t)(root ? rec->root_kind : 0);
  e->root_flags = root ? rec->root_flags : 0;
  e->flags = (uint8_t)((rec->has_timestamp ? E_TIMESTAMP : 0) | (rec->name ? E_NAME : 0) |
                       (rec->has_container ? E_CONTAINER : 0));
}

void gs_block_unpack(const batch *b, const entry *e, uint64_t line_base, gs_record *rec) {
  int object = e->kind == GS_REC_OBJECT;
  rec->kind = (gs_record_kind)e->kind;
  rec->line = line_base + e->line;
  rec->id = e->id;
  rec->type = e->type;
  rec->size = object ? e->size : 0;
  rec->has_timestamp = (e->flags & E_TIMESTAMP) != 0;
  rec->timestamp = rec->has_timestamp ? e->size : 0;
  rec->root_kind = e->root_kind;
  rec->root_flags = e->root_flags;
  rec->has_container = (e->flags & E_CONTAINER) != 0;
  rec->name = e->flags & E_NAME ? b->names + e->at : NULL;
  rec->name_len = e->flags & E_NAME ? (size_t)e->n : 0;
  rec->nrefs = object ? (size_t)e->n : 0;
  rec->refs = rec->nrefs ? b->refs + e->at : no_refs;
}

/* Points w->sub at the block, as a reader at the end of its input. */
static void sub_start(worker *w, size_t len, uint64_t offset) {
  gs_reader *s = &w->sub;
  const char *nl = last_newline(w->block, 0, len);
  s->buf = w->block;
  s->cap = w->block_cap - GS_READER_PAD - 1;
  s->pos = s->scanned = 0;
  s->end = len;
  s->complete = nl ? (size_t)(nl + 1 - w->block) : 0;
  s->eof = 1;
  s->skip_line = s->io_error = 0;
  s->line = 0;
  s->base = offset;
}

static void batch_start(batch *b) {
  b->n = b->ndiags = b->nrefs = b->names_len = 0;
  b->sections = 0;
}

/* Parses the next record of w->sub into the batch: GS_OK, GS_EOF at the
 * end of the block, or an error. */
static int parse_entry(worker *w, batch *b, uint64_t offset) {
  entry *e;
  int err;
  if (grow((void **)&b->entries, &b->cap, b->n + 1, sizeof *b->entries)) return GS_ENOMEM;
  e = &b->entries[b->n];
  err = gs_reader_read_next_(&w->sub, &w->rec);
  if (err == GS_EOF) return err;
  e->end = w->sub.base + w->sub.pos - offset;
  e->line = w->rec.line;
  if (err == GS_EFORMAT) {
    if (grow((void **)&b->diags, &b->diags_cap, b->ndiags + 1, sizeof *b->diags)) return GS_ENOMEM;
    b->diags[b->ndiags] = w->sub.diag;
    e->at = b->ndiags++;
    e->flags = E_FAILED;
  } else if (err || (err = keep(b, &w->sub, &w->rec, e))) {
    return err;
  } else {
    pack(&w->rec, e);
    if (w->rec.kind == GS_REC_SECTION || w->rec.kind == GS_REC_END) b->sections++;
  }
  b->n++;
  return GS_OK;
}

/* Parses the references that end the line an earlier block began, as the
 * block's first entry (failed, it holds the references parsed before the
 * failure). */
static int parse_rest(worker *w, batch *b) {
  gs_reader *s = &w->sub;
  char *nl = memchr(s->buf, '\n', s->end), *end = nl ? nl : s->buf + s->end;
  entry *e;
  int err;
  if (grow((void **)&b->entries, &b->cap, 1, sizeof *b->entries)) return GS_ENOMEM;
  e = &b->entries[0];
  *end = '\n';
  err = gs_reader_parse_rest_(s, s->buf, end, &w->rec);
  s->pos = (size_t)(end - s->buf) + (nl != NULL);
  e->end = s->pos;
  e->line = 0;
  e->kind = GS_REC_OBJECT;
  if (err == GS_EFORMAT) {
    if (grow((void **)&b->diags, &b->diags_cap, 1, sizeof *b->diags)) return GS_ENOMEM;
    b->diags[0] = s->diag;
    e->at = b->ndiags++;
    e->n = w->rec.nrefs;
    e->flags = E_REST | E_FAILED;
  } else if (err || (err = keep(b, s, &w->rec, e))) {
    return err;
  } else {
    e->flags = E_REST;
  }
  b->n = 1;
  return GS_OK;
}

int gs_block_parse(worker *w, batch *b, size_t len, uint64_t offset) {
  int err;
  batch_start(b);
  /* Nothing to parse, and maybe no block yet: the source ended before it. */
  if (!len) {
    b->lines = 0;
    b->start_offset = b->end_offset = offset;
    return GS_OK;
  }
  sub_start(w, len, offset);
  if (b->rest && (err = parse_rest(w, b))) return err;
  while ((err = parse_entry(w, b, offset)) == GS_OK) continue;
  if (err != GS_EOF) return err;
  b->lines = w->sub.line;
  b->start_offset = offset;
  b->end_offset = offset + len;
  return GS_OK;
}

/* Drops the rest of the line w->sub failed on, as it arrives. */
static int skip_line(gs_reader *s) {
  while (s->skip_line) {
    char *nl = memchr(s->buf + s->pos, '\n', s->end - s->pos);
    int err;
    if (nl) {
      s->pos = (size_t)(nl + 1 - s->buf);
      s->skip_line = 0;
    } else if (s->eof) {
      s->pos = s->end;
      s->skip_line = 0;
    } else {
      s->pos = s->end;
      if ((err = gs_reader_refill_(s))) return err;
    }
  }
  return GS_OK;
}

int gs_block_stream(ahead *a, worker *w, batch *b, size_t *len, uint64_t offset) {
  gs_reader *s = &w->sub;
  int err;
  batch_start(b);
  sub_start(w, *len, offset);
  s->eof = 0;
  s->complete = 0;
  s->fn = a->r->fn;
  s->ctx = a->r->ctx;
  err = parse_entry(w, b, offset);
  if (!err || err == GS_EFORMAT) err = skip_line(s);
  w->block = s->buf;                   /* the window may have grown */
  w->block_cap = s->cap + GS_READER_PAD;
  s->fn = NULL;
  *len = (size_t)(s->base + s->pos - offset);
  if (b->n) b->entries[b->n - 1].end = *len;
  b->lines = s->line;
  b->start_offset = offset;
  b->end_offset = offset + *len;
  if (err) return a->src_end = err;
  if (gs_block_reserve(&a->carry, &a->carry_cap, s->end - s->pos)) return a->src_end = GS_ENOMEM;
  memcpy(a->carry, s->buf + s->pos, s->end - s->pos);
  a->carry_len = s->end - s->pos;
  a->carry_lines = 1;
  if (s->eof && !a->carry_len) return a->src_end = GS_EOF;
  return 0;
}

