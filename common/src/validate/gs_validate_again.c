/* gs_validate_again.c - the lines of a section's dangling references, in
 * later mode (see gs_validate.c).
 *
 * At the section's end, a referenced ID that is not defined means the
 * section has dangling references, whose diagnostics need the line of the
 * first mention of each. The parts of the section where those may be are
 * read again, checking references as gs_validate.c does but against all
 * the section's objects, which gives the same list: with the workers'
 * notes (gs_refs.h), the blocks where a dangling ID may be mentioned first,
 * and the blocks this thread noted itself; without workers, the spans of
 * lines this thread noted where one may; else (too many dangling IDs to
 * look for, offsets lost to an overlong line) the whole section, from its
 * start. A heap whose few dangling references sit on one line at its end
 * is then read again for that line's block or span only. */
#include <stdlib.h>
#include <string.h>
#include "gs_array.h"
#include "gs_error.h"
#include "gs_validate_int.h"

#define REREAD_AHEAD_BYTES (1u << 20) /* spans read again on the parsing threads */
#define MAX_SOUGHT      4096   /* dangling IDs looked for block by block; with more,
                                * most blocks would be read again anyway */

static int check_refs(gs_validator *v, const gs_record *rec) {
  size_t i;
  int err = GS_OK;
  gs_validator_prefetch_refs_(v, rec->refs, rec->nrefs);
  for (i = 0; i < rec->nrefs && !err; i++) err = gs_validator_check_reference_(v, rec->refs[i], rec->line);
  return err;
}

/* Later mode: reads the span again, up to the line that closed the
 * section or until the first mention of each of the missing IDs was found,
 * and checks its references against all the section's objects. */
static int reread(gs_validator *v, const gs_refs_block *span, uint64_t close_line, size_t missing) {
  gs_reader *r;
  gs_record rec;
  gs_reader_mark from;
  int err;
  from.offset = span->offset;
  from.line = span->line;
  if ((err = gs_reader_reopen(v->source, &from, &r))) return err;
  /* The first pass's workers wait on full slots: the processors are free.
   * A small span is not worth starting threads for. */
  if (span->bytes >= REREAD_AHEAD_BYTES && (err = gs_reader_start_thread(r))) {
    gs_reader_free(r);
    return err;
  }
  for (;;) {
    uint64_t line;
    if ((err = gs_reader_next(r, &rec)) == GS_EFORMAT) line = gs_reader_diag(r)->line;
    else if (err) break;
    else line = rec.line;
    if (line >= close_line || line - span->line > span->lines) break;
    if (!err && rec.kind == GS_REC_OBJECT && line > v->section_line && (err = check_refs(v, &rec)))
      break;
    /* Nothing after the span's last line is parsed: it may be a long one.
     * Without merging, the list holds each ID once. */
    if (line - span->line == span->lines || (!v->merge && v->nrefs >= missing)) break;
  }
  gs_reader_free(r);
  return err == GS_EOF || err == GS_EFORMAT ? GS_OK : err;
}

/* Later mode, with workers: the block of a record whose references this
 * thread notes, to be searched with the workers' blocks. */
int gs_validator_own_block_(gs_validator *v) {
  gs_refs_block b;
  const gs_refs_block *last = v->nown ? &v->own[v->nown - 1] : NULL;
  if (!v->ahead || gs_reader_block(v->source, &b)) return GS_OK;
  if (last && last->offset == b.offset && last->line == b.line) return GS_OK;
  if (gs_array_reserve((void **)&v->own, &v->own_cap, v->nown + 1, sizeof *v->own)) return GS_ENOMEM;
  v->own[v->nown++] = b;
  return GS_OK;
}

static int by_start(const void *a, const void *b) {
  const gs_refs_block *x = a, *y = b;
  return x->line < y->line ? -1 : x->line > y->line;
}

/* The span of lines from v->span_from to the end of the line of the
 * record returned last, or to the end of the section when not known. */
static gs_refs_block span_to(const gs_validator *v, const gs_reader_mark *to) {
  gs_refs_block b;
  memset(&b, 0, sizeof b);
  b.offset = v->span_from.offset;
  b.line = v->span_from.line;
  b.lines = to ? to->line - b.line : UINT64_MAX - b.line;
  b.bytes = (to ? to->offset : gs_reader_offset(v->source)) - b.offset;
  b.exact = 1;
  return b;
}

int gs_validator_close_span_(gs_validator *v) {
  gs_reader_mark m;
  gs_refs_block b;
  int err = gs_reader_mark_here(v->source, &m);
  if (err) return err;
  b = span_to(v, &m);
  if ((err = gs_refs_spans_close(&v->spans, &b))) return err;
  v->span_from = m;
  return GS_OK;
}

/* Sorts the blocks and joins those that touch into spans: GS_OK, or
 * GS_EINVAL when the offset of one is not known. */
static int join_blocks(gs_refs_block *b, size_t *n) {
  size_t i, k = 0;
  for (i = 0; i < *n; i++)
    if (!b[i].exact) return GS_EINVAL;
  if (!*n) return GS_OK;
  qsort(b, *n, sizeof *b, by_start);
  for (i = 1; i < *n; i++) {
    gs_refs_block *last = &b[k];
    if (b[i].line > last->line + last->lines) { b[++k] = b[i]; continue; }
    if (b[i].line + b[i].lines > last->line + last->lines) {
      last->lines = b[i].line + b[i].lines - last->line;
      last->bytes = b[i].offset + b[i].bytes - last->offset;
    }
  }
  *n = k + 1;
  return GS_OK;
}

/* The spans where the missing IDs (forward but not defined) may be first
 * mentioned: the workers' blocks that may, and the blocks this thread
 * noted; without workers, the spans this thread noted that may. GS_OK, or
 * another code when the whole section must be read. */
static int sought_spans(gs_validator *v, size_t missing, gs_refs_block **out, size_t *n) {
  uint64_t *ids;
  size_t i, cap = 0;
  int err;
  if (missing > MAX_SOUGHT || !(ids = malloc(missing * sizeof *ids))) return GS_EINVAL;
  gs_idset_outside(&v->forward, &v->defined, ids);
  if (v->ahead) {
    err = gs_refs_ahead_find(v->ahead, v->section_epoch, ids, missing, out, n, &cap);
  } else {
    gs_refs_block last = span_to(v, NULL);
    err = gs_refs_spans_close(&v->spans, &last);
    if (!err) err = gs_refs_spans_find(&v->spans, ids, missing, out, n, &cap);
  }
  free(ids);
  for (i = 0; !err && i < v->nown; i++)
    if (!(err = gs_array_reserve((void **)out, &cap, *n + 1, sizeof **out))) (*out)[(*n)++] = v->own[i];
  return err ? err : join_blocks(*out, n);
}

/* Later mode: the first mention of each missing ID into v->refs, from the
 * spans that may hold one, else from the whole section. */
static int find_refs(gs_validator *v, uint64_t close_line, size_t missing) {
  gs_refs_block *spans = NULL, whole;
  size_t n = 0, i;
  int err = GS_OK;
  if (sought_spans(v, missing, &spans, &n)) {
    whole.offset = v->mark.offset;
    whole.line = v->mark.line;
    whole.lines = UINT64_MAX - whole.line;
    whole.bytes = gs_reader_offset(v->source) - v->mark.offset;
    free(spans);
    spans = &whole;
    n = 1;
  }
  gs_idset_clear(&v->forward);
  v->later = 0;
  for (i = 0; !err && i < n && (v->merge || v->nrefs < missing); i++)
    err = reread(v, &spans[i], close_line, missing);
  if (spans != &whole) free(spans);
  return err;
}

/* Later mode: the section's dangling references into v->refs, as checking
 * them as they came would have left them. */
int gs_validator_later_refs_(gs_validator *v, uint64_t close_line) {
  size_t missing = 0;
  int err = gs_refs_ahead_gather(v->ahead, v->section_epoch, &v->forward, &v->overflow);
  if (!err) missing = v->overflow ? SIZE_MAX : gs_idset_outside(&v->forward, &v->defined, NULL);
  if (!err && missing) err = find_refs(v, close_line, missing);
  gs_refs_ahead_release(v->ahead, v->section_epoch + 1);
  gs_refs_spans_clear(&v->spans);
  v->nown = 0;
  return err;
}
