/* gs_walk.c - the heap walker: a source's visitor calls become sink records.
 *
 * Everything here happens once per record, so it stays a few comparisons
 * and a counter; the only memory is the open section's name, kept to write
 * it again in the "c" record. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gs_port.h"
#include "gs_reader.h"
#include "gs_walk.h"

typedef struct walk_state {
  gs_sink *sink;
  const gs_walk_options *opt;
  gs_walk_stats *st;
  char *name;                   /* the open section's name, mark included */
  size_t name_len, name_cap;
  int in_section;
  int has_timestamp;            /* the source gave the next record's time */
  uint64_t timestamp;
  size_t max_refs;              /* of one object */
  int in_object;                /* between object_begin and object_end */
  uint64_t object_id;           /* the object in parts, and its references so far */
  size_t object_refs;
  gs_walk_failure failed;
} walk_state;

/* ---- failures ---- */

static int walk_source_error(walk_state *w, const char *what) {
  snprintf(w->st->error, sizeof w->st->error, "%s", what);
  w->failed = GS_WALK_SOURCE;
  return GS_EINVAL;
}

/* A sink call's result: on error, remember that the sink failed. */
static int walk_sink(walk_state *w, int err) {
  if (err && !w->failed) {
    w->failed = GS_WALK_SINK;
    snprintf(w->st->error, sizeof w->st->error, "%s",
             w->sink->error[0] ? w->sink->error : gs_strerror(err));
  }
  return err;
}

static int walk_need_section(walk_state *w, const char *record) {
  char msg[96];
  if (w->in_object) {
    snprintf(msg, sizeof msg, "the source gave %s inside an object's parts", record);
    return walk_source_error(w, msg);
  }
  if (w->in_section) return GS_OK;
  snprintf(msg, sizeof msg, "the source gave %s outside a section", record);
  return walk_source_error(w, msg);
}

/* ---- time ---- */

static uint64_t walk_time(walk_state *w) {
  if (w->has_timestamp) {
    w->has_timestamp = 0;
    return w->timestamp;
  }
  return w->opt->fixed_clock ? w->opt->clock_ms : gs_port_clock_ms();
}

static int on_timestamp(void *ctx, uint64_t ms) {
  walk_state *w = ctx;
  w->has_timestamp = 1;
  w->timestamp = ms;
  return GS_OK;
}

/* ---- sections ---- */

static int walk_keep_name(walk_state *w, const char *name, size_t len) {
  size_t mark = w->opt->stable_ids ? strlen(GS_WALK_STABLE_MARK) : 0;
  if (len + mark > w->name_cap) {
    size_t cap = len + mark + 64;
    char *p = realloc(w->name, cap);
    if (!p) {
      walk_source_error(w, "out of memory for a section name");
      return GS_ENOMEM;
    }
    w->name = p;
    w->name_cap = cap;
  }
  if (len) memcpy(w->name, name, len);
  if (mark) memcpy(w->name + len, GS_WALK_STABLE_MARK, mark);
  w->name_len = len + mark;
  return GS_OK;
}

static int on_section(void *ctx, const char *name, size_t len) {
  walk_state *w = ctx;
  int err;
  if (w->in_section) return walk_source_error(w, "the source opened a section inside another");
  if ((err = walk_keep_name(w, name, len))) return err;
  w->in_section = 1;
  w->st->sections++;
  return walk_sink(w, w->sink->ops->section(w->sink, w->name, w->name_len, walk_time(w)));
}

static int on_section_end(void *ctx) {
  walk_state *w = ctx;
  int err;
  if ((err = walk_need_section(w, "a section end"))) return err;
  w->in_section = 0;
  return walk_sink(w, w->sink->ops->section_end(w->sink, w->name, w->name_len, walk_time(w)));
}

/* ---- records ---- */

static int on_type(void *ctx, uint64_t id, const char *name, size_t len) {
  walk_state *w = ctx;
  int err;
  if ((err = walk_need_section(w, "a type"))) return err;
  w->st->types++;
  return walk_sink(w, w->sink->ops->type(w->sink, id, name, len));
}

/* An object above the reference limit: the dump would not read back. */
static int walk_too_many_refs(walk_state *w, uint64_t id, uint64_t nrefs) {
  char msg[160];
  snprintf(msg, sizeof msg, "the source gave object %llx with %llu references, above the "
           "limit of %lu (--max-refs)", (unsigned long long)id, (unsigned long long)nrefs,
           (unsigned long)w->max_refs);
  return walk_source_error(w, msg);
}

static int on_object(void *ctx, uint64_t id, uint64_t type, uint64_t size,
                     const uint64_t *refs, size_t nrefs) {
  walk_state *w = ctx;
  int err;
  if ((err = walk_need_section(w, "an object"))) return err;
  if (nrefs > w->max_refs) return walk_too_many_refs(w, id, nrefs);
  w->st->objects++;
  w->st->references += nrefs;
  return walk_sink(w, w->sink->ops->object(w->sink, id, type, size, refs, nrefs));
}

static int on_object_begin(void *ctx, uint64_t id, uint64_t type, uint64_t size) {
  walk_state *w = ctx;
  int err;
  if ((err = walk_need_section(w, "an object"))) return err;
  w->in_object = 1;
  w->object_id = id;
  w->object_refs = 0;
  w->st->objects++;
  return walk_sink(w, w->sink->ops->object_begin(w->sink, id, type, size));
}

static int on_object_refs(void *ctx, const uint64_t *refs, size_t nrefs) {
  walk_state *w = ctx;
  if (!w->in_object) return walk_source_error(w, "the source gave references outside an object");
  if (nrefs > w->max_refs - w->object_refs)
    return walk_too_many_refs(w, w->object_id, (uint64_t)w->object_refs + nrefs);
  w->object_refs += nrefs;
  w->st->references += nrefs;
  return walk_sink(w, w->sink->ops->object_refs(w->sink, refs, nrefs));
}

static int on_object_end(void *ctx) {
  walk_state *w = ctx;
  if (!w->in_object) return walk_source_error(w, "the source ended an object it did not begin");
  w->in_object = 0;
  return walk_sink(w, w->sink->ops->object_end(w->sink));
}

static int on_root(void *ctx, uint64_t id, unsigned kind, unsigned flags, uint64_t container) {
  walk_state *w = ctx;
  int err;
  if ((err = walk_need_section(w, "a root"))) return err;
  if (kind >= GS_ROOT_KINDS) return walk_source_error(w, "the source gave a root kind above 5");
  w->st->roots++;
  return walk_sink(w, w->sink->ops->root(w->sink, id, kind, flags, container));
}

static int on_generation(void *ctx, unsigned generation, uint64_t start, uint64_t used,
                         uint64_t reserved) {
  walk_state *w = ctx;
  int err;
  if ((err = walk_need_section(w, "a generation range"))) return err;
  if (generation > 4) return walk_source_error(w, "the source gave a generation above 4");
  w->st->generations++;
  return walk_sink(w, w->sink->ops->generation(w->sink, generation, start, used, reserved));
}

static int on_static_name(void *ctx, uint64_t object, const char *name, size_t len) {
  walk_state *w = ctx;
  int err;
  if ((err = walk_need_section(w, "a static field's name"))) return err;
  if (!w->sink->ops->static_name) return GS_OK;
  return walk_sink(w, w->sink->ops->static_name(w->sink, object, name, len));
}

/* ---- the walk ---- */

int gs_walk_check(const gs_source *src, const gs_walk_options *opt, char *err,
                  size_t errcap) {
  if (!opt->stable_ids || src->stable_ids) return GS_OK;
  snprintf(err, errcap,
           "--stable-ids: the %s source cannot keep an object's ID across captures",
           src->ops->name);
  return GS_EINVAL;
}

/* After the source returned err: name the side that failed. */
static void walk_blame(walk_state *w, const gs_source *src, int err) {
  if (w->failed) {
    w->st->failed = w->failed;
    return;
  }
  w->st->failed = GS_WALK_SOURCE;
  snprintf(w->st->error, sizeof w->st->error, "%s",
           src->error[0] ? src->error : gs_strerror(err));
}

int gs_walk(gs_source *src, gs_sink *sink, const gs_walk_options *opt, gs_walk_stats *st) {
  gs_heap_visitor v;
  walk_state w;
  uint64_t t0;
  int err;

  memset(st, 0, sizeof *st);
  if ((err = gs_walk_check(src, opt, st->error, sizeof st->error))) {
    st->failed = GS_WALK_USAGE;
    return err;
  }
  memset(&w, 0, sizeof w);
  w.sink = sink;
  w.opt = opt;
  w.st = st;
  memset(&v, 0, sizeof v);
  v.ctx = &w;
  v.section = on_section;
  v.type = on_type;
  v.object = on_object;
  v.root = on_root;
  v.generation = on_generation;
  v.section_end = on_section_end;
  v.timestamp = on_timestamp;
  v.static_name = on_static_name;
  v.object_begin = on_object_begin;
  v.object_refs = on_object_refs;
  v.object_end = on_object_end;
  src->error[0] = '\0';
  src->use_stable_ids = opt->stable_ids;
  src->max_refs = w.max_refs = opt->max_refs ? opt->max_refs : GS_READER_DEFAULT_MAX_REFS;

  t0 = gs_port_time_us();
  err = src->ops->walk(src, &v);
  if (!err && w.in_section) err = walk_source_error(&w, "the source left a section open");
  st->seconds_us = gs_port_time_us() - t0;
  if (err) walk_blame(&w, src, err);
  free(w.name);
  return err;
}
