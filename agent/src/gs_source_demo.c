/* gs_source_demo.c - the demo heap source: the contacts application
 * (agent/demo) running on the instrumented runtime (agent/runtime).
 *
 * The program starts when the source is opened: it fills its heap and runs
 * its first steps. Each walk is a capture: an induced full collection with
 * the program stopped, then the heap streamed to the visitor from inside
 * that pause (pause_us). Later walks first let the program run on, so that
 * repeated snapshots show its leak growing, unless the agent already let it
 * run (run, between heap size checks). Object IDs are addresses, or the
 * runtime's stable identities when the walker sets use_stable_ids. The heap
 * size comes from the runtime's statistics, without a walk. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_demo.h"
#include "gs_error.h"
#include "gs_knob.h"
#include "gs_port.h"
#include "gs_rt.h"
#include "gs_sources.h"

#define DEFAULT_OBJECTS 10000
#define DEFAULT_STEPS   100
#define MAX_STEPS       ((uint64_t)1 << 32)
#define MAX_ARENA_MB    ((uint64_t)32 << 10)

const char gs_source_demo_help[] =
  "  demo[:KNOBS]  the heap of the demo application (a contacts app with a slow\n"
  "                leak) running on the instrumented GC runtime, captured at an\n"
  "                induced full collection with the program stopped. Object IDs\n"
  "                are addresses; --stable-ids gives the runtime's identities,\n"
  "                which survive compaction. KNOBS is KEY=VALUE,...:\n"
  "    objects=N      live objects to fill the heap with first (default 10000)\n"
  "    steps=N        steps the program runs before the first capture (default 100)\n"
  "    every=N        steps it runs before each later capture, or between two\n"
  "                   heap size checks under --trigger (default: steps)\n"
  "    seed=S         seed of the program's choices (default 1)\n"
  "    arena=MB       heap size in MB (default: 48 + 80 bytes per object)\n";

typedef struct demo_options {
  gs_demo_options demo;
  uint64_t steps, every;
  int every_set;
} demo_options;

typedef struct demo_source {
  gs_source base;
  gs_demo *demo;
  demo_options opt;
  uint64_t walks;
  int ran;                      /* ran on since the last walk */
} demo_source;

static int parse(const char *p, demo_options *o, char *err, size_t errcap) {
  gs_knob k;
  uint64_t mb;
  int rc;
  o->demo.objects = DEFAULT_OBJECTS;
  o->demo.seed = 1;
  o->demo.arena_bytes = 0;
  o->steps = DEFAULT_STEPS;
  o->every_set = 0;
  while ((rc = gs_knob_next(&p, &k, err, errcap)) == 1) {
    if (gs_knob_is(&k, "objects"))
      rc = gs_knob_count(&k, 1, GS_DEMO_MAX_OBJECTS, &o->demo.objects, err, errcap);
    else if (gs_knob_is(&k, "steps"))
      rc = gs_knob_count(&k, 0, MAX_STEPS, &o->steps, err, errcap);
    else if (gs_knob_is(&k, "every")) {
      rc = gs_knob_count(&k, 0, MAX_STEPS, &o->every, err, errcap);
      o->every_set = 1;
    }
    else if (gs_knob_is(&k, "seed"))
      rc = gs_knob_count(&k, 0, UINT64_MAX, &o->demo.seed, err, errcap);
    else if (gs_knob_is(&k, "arena")) {
      rc = gs_knob_count(&k, 1, MAX_ARENA_MB, &mb, err, errcap);
      if (!rc && mb > SIZE_MAX >> 20) rc = gs_knob_bad(&k, "too large for this system", err, errcap);
      o->demo.arena_bytes = (size_t)mb << 20;
    } else
      rc = gs_knob_bad(&k, "unknown demo knob (objects, steps, every, seed, arena)", err,
                       errcap);
    if (rc) return rc;
  }
  if (rc) return rc;
  if (!o->every_set) o->every = o->steps;
  return GS_OK;
}

/* ---- the runtime's visitor, forwarded to the walker's ---- */

static int on_type(void *ctx, uint32_t id, const char *name, size_t len) {
  const gs_heap_visitor *v = ctx;
  return v->type(v->ctx, id, name, len);
}

static int on_object(void *ctx, uint64_t id, uint32_t type, uint64_t size,
                     const uint64_t *refs, size_t nrefs) {
  const gs_heap_visitor *v = ctx;
  return v->object(v->ctx, id, type, size, refs, nrefs);
}

static int on_root(void *ctx, uint64_t id, unsigned kind, unsigned flags, uint32_t container) {
  const gs_heap_visitor *v = ctx;
  return v->root(v->ctx, id, kind, flags, container);
}

static int on_generation(void *ctx, unsigned gen, uint64_t start, uint64_t used,
                         uint64_t reserved) {
  const gs_heap_visitor *v = ctx;
  return v->generation ? v->generation(v->ctx, gen, start, used, reserved) : GS_OK;
}

static int run(demo_source *s, uint64_t steps) {
  int err = gs_demo_step(s->demo, steps);
  if (err)
    snprintf(s->base.error, sizeof s->base.error,
             "the demo application failed after %llu steps: %s",
             (unsigned long long)gs_demo_steps_done(s->demo), gs_strerror(err));
  return err;
}

static int demo_walk(gs_source *src, const gs_heap_visitor *v) {
  demo_source *s = (demo_source *)src;
  gs_rt *rt = gs_demo_runtime(s->demo);
  gs_rt_visitor rv;
  uint64_t t0;
  int err;
  const char *name = gs_rt_domain(rt);
  if (s->walks++ && !s->ran && (err = run(s, s->opt.every))) return err;
  s->ran = 0;
  rv.ctx = (void *)v;
  rv.type = on_type;
  rv.object = on_object;
  rv.root = on_root;
  rv.generation = on_generation;
  if ((err = v->section(v->ctx, name, strlen(name)))) return err;
  t0 = gs_port_time_us();
  err = gs_rt_capture(rt, &rv, src->use_stable_ids ? GS_RT_STABLE_IDS : 0);
  src->pause_us = gs_port_time_us() - t0;
  if (err) return err;
  return v->section_end(v->ctx);
}

static void demo_free(gs_source *src) {
  demo_source *s = (demo_source *)src;
  if (!s) return;
  gs_demo_free(s->demo);
  free(s);
}

/* The generations' bytes: live objects and garbage not yet collected. */
static int demo_heap_bytes(gs_source *src, uint64_t *bytes) {
  demo_source *s = (demo_source *)src;
  gs_rt_stats st;
  gs_rt_get_stats(gs_demo_runtime(s->demo), &st);
  *bytes = st.generation_bytes[0] + st.generation_bytes[1] + st.generation_bytes[2] +
           st.generation_bytes[3];
  return GS_OK;
}

static int demo_run(gs_source *src) {
  demo_source *s = (demo_source *)src;
  s->ran = 1;
  return run(s, s->opt.every);
}

static const gs_source_ops demo_ops = {"demo", demo_walk, demo_free, demo_heap_bytes,
                                       demo_run, NULL, NULL};

int gs_source_demo_new(gs_source **out, const char *options, char *err, size_t errcap) {
  demo_source *s;
  int rc;
  *out = NULL;
  if (!(s = calloc(1, sizeof *s))) {
    snprintf(err, errcap, "out of memory");
    return GS_ENOMEM;
  }
  s->base.ops = &demo_ops;
  s->base.stable_ids = 1;       /* the runtime keeps an identity per object */
  if ((rc = parse(options, &s->opt, err, errcap))) {
    demo_free(&s->base);
    return rc;
  }
  if ((rc = gs_demo_new(&s->demo, &s->opt.demo))) {
    snprintf(err, errcap, "cannot start the demo application with %llu objects: %s",
             (unsigned long long)s->opt.demo.objects, gs_strerror(rc));
    demo_free(&s->base);
    return rc;
  }
  if ((rc = run(s, s->opt.steps))) {
    snprintf(err, errcap, "%s", s->base.error);
    demo_free(&s->base);
    return rc;
  }
  *out = &s->base;
  return GS_OK;
}
