/* gsf_hprof_heap.c - the heap side of the HPROF reader: the sub-records of
 * a heap dump (class dumps, instances, object and primitive arrays, roots)
 * as records. An instance read before its class (or a superclass) is
 * dumped waits in a temporary file and is decoded at the end of its dump. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_array.h"
#include "gs_error.h"
#include "gsf_format.h"
#include "gsf_hprof_int.h"

enum { SUB_CLASS = 0x20, SUB_INSTANCE = 0x21, SUB_OBJ_ARRAY = 0x22, SUB_PRIM_ARRAY = 0x23,
       SUB_PRIM_ARRAY_NODATA = 0xc3 };   /* Android: a primitive array without its values */
/* A sub-record in root_table that names an object without rooting it. */
#define NOT_A_ROOT 0xff

/* The root sub-records: tag, RPM kind, and what follows the object ID.
 * Android's dumps (JAVA PROFILE 1.0.3) add the tags from 0x89, and 0xfe,
 * which starts the objects of one of its heaps (a u4 heap ID and the ID of
 * its name: as many bytes as an ID and a u4, and no object). */
static const struct {
  unsigned char tag, kind, ids, u4s;
} root_table[] = {
  {0xff, GS_ROOT_INTERNAL, 0, 0},   /* unknown */
  {0x01, GS_ROOT_HANDLE, 1, 0},     /* JNI global (+ the global ref's ID) */
  {0x02, GS_ROOT_LOCAL, 0, 2},      /* JNI local (+ thread, frame) */
  {0x03, GS_ROOT_LOCAL, 0, 2},      /* Java frame (+ thread, frame) */
  {0x04, GS_ROOT_LOCAL, 0, 1},      /* native stack (+ thread) */
  {0x05, GS_ROOT_RUNTIME, 0, 0},    /* sticky class */
  {0x06, GS_ROOT_LOCAL, 0, 1},      /* thread block (+ thread) */
  {0x07, GS_ROOT_INTERNAL, 0, 0},   /* monitor used */
  {0x08, GS_ROOT_INTERNAL, 0, 2},   /* thread object (+ thread, stack trace) */
  {0x89, GS_ROOT_RUNTIME, 0, 0},    /* interned string */
  {0x8a, GS_ROOT_FINALIZER, 0, 0},  /* finalizing */
  {0x8b, GS_ROOT_INTERNAL, 0, 0},   /* debugger */
  {0x8c, GS_ROOT_INTERNAL, 0, 0},   /* reference cleanup */
  {0x8d, GS_ROOT_INTERNAL, 0, 0},   /* VM internal */
  {0x8e, GS_ROOT_INTERNAL, 0, 2},   /* JNI monitor (+ thread, stack depth) */
  {0x90, NOT_A_ROOT, 0, 0},         /* unreachable */
  {0xfe, NOT_A_ROOT, 0, 1},         /* heap dump info */
};

static uint64_t align8(uint64_t n) { return (n + 7) & ~(uint64_t)7; }

/* Bytes of a value of basic type t, or 0 for a type HPROF does not have. */
static unsigned type_size(const hprof *hp, unsigned t) {
  static const unsigned char sizes[12] = {0, 0, 0, 0, 1, 2, 4, 8, 1, 2, 4, 8};
  if (t == T_OBJECT) return hp->idsize;
  return t < 12 ? sizes[t] : 0;
}

/* Computes c's chain layout: its own instance fields, then its
 * superclass's, up to java.lang.Object, as HPROF lays out an instance. */
static int class_layout(hprof *hp, hp_class *c, uint64_t at) {
  uint32_t start = (uint32_t)hp->nrefoffs;
  uint64_t off = 0;
  size_t steps = 0, i;
  const hp_class *k;
  c->referent = NONE;
  for (k = c; k; k = k->super ? gsf_hprof_class_find(hp, k->super) : NULL) {
    if (++steps > hp->nclasses)
      return gsf_in_fail(&hp->in, at, "the superclasses of class 0x%llx form a cycle",
                         (unsigned long long)c->id);
    if (!k->dumped)
      return gsf_in_fail(&hp->in, at, "class 0x%llx is used before its class dump",
                         (unsigned long long)k->id);
    for (i = 0; i < k->nfields; i++) {
      unsigned t = hp->fields[k->field0 + i];
      if (t == T_OBJECT) {
        if (gs_array_reserve((void **)&hp->refoffs, &hp->refoffs_cap, hp->nrefoffs + 1,
                             sizeof *hp->refoffs))
          return gsf_hprof_oom(hp);
        if (k->id == hp->reference_class && i == hp->referent_field)
          c->referent = (uint32_t)(hp->nrefoffs - start);
        hp->refoffs[hp->nrefoffs++] = (uint32_t)off;
      }
      off += type_size(hp, t);
    }
    if (off > UINT32_MAX) return gsf_in_fail(&hp->in, at, "class 0x%llx is too large",
                                             (unsigned long long)c->id);
    if (k->super && !gsf_hprof_class_find(hp, k->super))
      return gsf_in_fail(&hp->in, at, "superclass 0x%llx of class 0x%llx has no class dump",
                         (unsigned long long)k->super, (unsigned long long)k->id);
  }
  c->layout = start;
  c->nrefs = (uint32_t)(hp->nrefoffs - start);
  c->bytes = (uint32_t)off;
  return GS_OK;
}

/* Reads one value of basic type t; sets *ref for an object reference. */
static int read_value(hprof *hp, uint64_t at, unsigned t, uint64_t *ref, uint64_t *bytes) {
  unsigned size = type_size(hp, t);
  *ref = 0;
  if (size == 0) return gsf_in_fail(&hp->in, at, "unknown basic type %u", t);
  *bytes += size;
  if (t == T_OBJECT) return gsf_hprof_read_id(hp, ref, "a class dump");
  return gsf_in_skip(&hp->in, size, "a class dump");
}

static int class_constants(hprof *hp, uint64_t at) {
  uint32_t n, i, idx, t;
  uint64_t ref, bytes = 0;
  int rc = gsf_in_u2(&hp->in, &n, "a class dump");
  for (i = 0; i < n && !rc; i++) {
    if (!(rc = gsf_in_u2(&hp->in, &idx, "a class dump")) &&
        !(rc = gsf_in_u1(&hp->in, &t, "a class dump")))
      rc = read_value(hp, at, t, &ref, &bytes);
  }
  return rc;
}

/* Static fields: each non-null reference is a static root whose container
 * is the class. */
static int class_statics(hprof *hp, uint64_t at, uint64_t id, uint64_t *bytes) {
  uint32_t n, i, t;
  uint64_t name, ref;
  int rc = gsf_in_u2(&hp->in, &n, "a class dump");
  for (i = 0; i < n && !rc; i++) {
    if ((rc = gsf_hprof_read_id(hp, &name, "a class dump")) ||
        (rc = gsf_in_u1(&hp->in, &t, "a class dump")) ||
        (rc = read_value(hp, at, t, &ref, bytes)))
      break;
    if (ref) rc = gs_writer_root(hp->w, ref, GS_ROOT_STATIC, 0, id);
  }
  return rc;
}

static int is_named(const hprof *hp, uint64_t name, const char *want) {
  size_t n;
  const char *s = gsf_hprof_string_of(hp, name, &n);
  return s && n == strlen(want) && memcmp(s, want, n) == 0;
}

static int class_fields(hprof *hp, uint64_t at, hp_class *c) {
  uint32_t n, i, t;
  uint64_t name;
  int rc = gsf_in_u2(&hp->in, &n, "a class dump");
  if (rc) return rc;
  if (gs_array_reserve((void **)&hp->fields, &hp->fields_cap, hp->nfields + n, 1))
    return gsf_hprof_oom(hp);
  c->field0 = (uint32_t)hp->nfields;
  c->nfields = n;
  for (i = 0; i < n; i++) {
    if ((rc = gsf_hprof_read_id(hp, &name, "a class dump")) ||
        (rc = gsf_in_u1(&hp->in, &t, "a class dump")))
      return rc;
    if (type_size(hp, t) == 0) return gsf_in_fail(&hp->in, at, "unknown basic type %u", t);
    if (c->id == hp->reference_class && is_named(hp, name, "referent")) hp->referent_field = i;
    hp->fields[hp->nfields++] = (unsigned char)t;
  }
  return GS_OK;
}

static int sub_class(hprof *hp, uint64_t at) {
  uint64_t id, super, loader, statics = 0, refs[2];
  uint32_t serial, size;
  hp_class *c;
  size_t n = 0;
  int rc;
  if ((rc = gsf_hprof_read_id(hp, &id, "a class dump")) ||
      (rc = gsf_in_u4(&hp->in, &serial, "a class dump")) ||
      (rc = gsf_hprof_read_id(hp, &super, "a class dump")) || (rc = gsf_hprof_read_id(hp, &loader, "a class dump")) ||
      (rc = gsf_in_skip(&hp->in, 4 * (uint64_t)hp->idsize, "a class dump")) ||
      (rc = gsf_in_u4(&hp->in, &size, "a class dump")) || (rc = gsf_hprof_class_get(hp, id, &c)))
    return rc;
  if (c->dumped)
    return gsf_in_fail(&hp->in, at, "class 0x%llx is dumped twice", (unsigned long long)id);
  if (gs_array_reserve((void **)&hp->dumped, &hp->dumped_cap, hp->ndumped + 1, sizeof *hp->dumped))
    return gsf_hprof_oom(hp);
  hp->dumped[hp->ndumped++] = (uint32_t)(c - hp->classes);
  c->dumped = 1;
  c->super = super;
  c->loader = loader;
  if ((rc = class_constants(hp, at)) || (rc = class_statics(hp, at, id, &statics)) ||
      (rc = class_fields(hp, at, c)))
    return rc;
  if (!hp->class_type) hp->class_type = CLASS_TYPE_FALLBACK;
  if (super) refs[n++] = super;
  if (loader) refs[n++] = loader;
  return gs_writer_object(hp->w, id, hp->class_type, align8(2 * hp->idsize + statics), refs, n);
}

/* ---- objects ---------------------------------------------------------- */

/* The instance's references, but for the referent of a Reference, which
 * goes to *weak (0: none). */
static int instance_refs(hprof *hp, const hp_class *c, uint32_t nbytes, size_t *n, uint64_t *weak) {
  uint32_t pos = 0, i;
  int rc;
  *n = 0;
  *weak = 0;
  if (gs_array_reserve((void **)&hp->refs, &hp->refs_cap, c->nrefs, sizeof *hp->refs))
    return gsf_hprof_oom(hp);
  for (i = 0; i < c->nrefs; i++) {
    uint32_t off = hp->refoffs[c->layout + i];
    uint64_t ref;
    if ((rc = gsf_in_skip(hp->cur, off - pos, "an instance dump")) ||
        (rc = gsf_hprof_read_id(hp, &ref, "an instance dump")))
      return rc;
    pos = off + hp->idsize;
    if (i == c->referent) *weak = ref;
    else if (ref) hp->refs[(*n)++] = ref;
  }
  return gsf_in_skip(hp->cur, nbytes - pos, "an instance dump");
}

/* An instance whose fields follow in hp->cur, with its class dumped. The
 * referent of a Reference (weak, soft, phantom, or a finalizer's) keeps
 * nothing alive: it gets a weak root, as V8's weak edges do. */
static int instance(hprof *hp, uint64_t at, uint64_t id, uint64_t cid, uint32_t nbytes) {
  hp_class *c = gsf_hprof_class_find(hp, cid);
  uint64_t weak;
  size_t n;
  int rc;
  if (!c || !c->dumped)
    return gsf_in_fail(&hp->in, at, "instance 0x%llx of class 0x%llx, which has no class dump",
                       (unsigned long long)id, (unsigned long long)cid);
  if (c->layout == NONE && (rc = class_layout(hp, c, at))) return rc;
  if (nbytes != c->bytes)
    return gsf_in_fail(&hp->in, at, "instance 0x%llx has %lu bytes of fields; its class 0x%llx has %lu",
                       (unsigned long long)id, (unsigned long)nbytes,
                       (unsigned long long)cid, (unsigned long)c->bytes);
  if ((rc = instance_refs(hp, c, nbytes, &n, &weak)) ||
      (rc = gs_writer_object(hp->w, id, cid, align8(2 * hp->idsize + (uint64_t)nbytes), hp->refs, n)))
    return rc;
  return weak ? gs_writer_root(hp->w, weak, GS_ROOT_HANDLE, GS_FLAG_WEAK, 0) : GS_OK;
}

static int spill_put(hprof *hp, uint64_t v, unsigned n) {
  unsigned char b[8] = {0};
  unsigned i;
  for (i = 0; i < n; i++) b[i] = (unsigned char)(v >> (8 * (n - 1 - i)));
  return fwrite(b, 1, n, hp->spill) == n ? GS_OK : GS_EIO;
}

/* An instance read before its class dump waits in a temporary file (its
 * offset, IDs, size, then its fields as HPROF has them) for the end. */
static int defer(hprof *hp, uint64_t at, uint64_t id, uint64_t cid, uint32_t nbytes) {
  unsigned char buf[4096];
  int rc = GS_OK;
  if (!hp->spill && !(hp->spill = tmpfile())) rc = GS_EIO;
  if (!rc && (spill_put(hp, at, 8) || spill_put(hp, id, 8) || spill_put(hp, cid, 8) ||
              spill_put(hp, nbytes, 4)))
    rc = GS_EIO;
  while (!rc && nbytes) {
    uint32_t chunk = nbytes < sizeof buf ? nbytes : (uint32_t)sizeof buf;
    if ((rc = gsf_in_bytes(&hp->in, buf, chunk, "an instance dump"))) return rc;
    if (fwrite(buf, 1, chunk, hp->spill) != chunk) rc = GS_EIO;
    nbytes -= chunk;
  }
  if (rc) snprintf(hp->in.err, hp->in.errcap, "byte %llu: cannot keep an instance for later "
                   "in a temporary file", (unsigned long long)at);
  hp->deferred++;
  return rc;
}

/* Whether c and its superclasses have all been dumped (a cycle is not;
 * class_layout reports it). */
static int chain_dumped(const hprof *hp, const hp_class *c) {
  size_t steps = 0;
  while (c && c->dumped && ++steps <= hp->nclasses) {
    if (!c->super) return 1;
    c = gsf_hprof_class_find(hp, c->super);
  }
  return 0;
}

static int sub_instance(hprof *hp, uint64_t at) {
  uint64_t id, cid;
  uint32_t serial, nbytes;
  const hp_class *c;
  int rc;
  if ((rc = gsf_hprof_read_id(hp, &id, "an instance dump")) ||
      (rc = gsf_in_u4(&hp->in, &serial, "an instance dump")) ||
      (rc = gsf_hprof_read_id(hp, &cid, "an instance dump")) ||
      (rc = gsf_in_u4(&hp->in, &nbytes, "an instance dump")))
    return rc;
  c = gsf_hprof_class_find(hp, cid);
  if (!c || (c->layout == NONE && !chain_dumped(hp, c))) return defer(hp, at, id, cid, nbytes);
  return instance(hp, at, id, cid, nbytes);
}

static int spill_read(void *ctx, void *buf, size_t cap, size_t *got) {
  FILE *f = ctx;
  *got = fread(buf, 1, cap, f);
  return ferror(f) ? GS_EIO : GS_OK;
}

/* The deferred instances, now that every class dump has been read. */
int gsf_hprof_replay_deferred(hprof *hp) {
  gsf_in *sp;
  uint64_t i, at, id, cid;
  uint32_t nbytes;
  int rc = GS_OK;
  if (!hp->deferred) return GS_OK;
  if (fflush(hp->spill) || fseek(hp->spill, 0, SEEK_SET) || !(sp = malloc(sizeof *sp)))
    return gsf_hprof_oom(hp);
  gsf_in_init(sp, spill_read, hp->spill, hp->in.err, hp->in.errcap);
  hp->cur = sp;
  for (i = 0; i < hp->deferred && !rc; i++) {
    if (!(rc = gsf_in_u8(sp, &at, "the temporary file")) && !(rc = gsf_in_u8(sp, &id, "the temporary file")) &&
        !(rc = gsf_in_u8(sp, &cid, "the temporary file")) && !(rc = gsf_in_u4(sp, &nbytes, "the temporary file")))
      rc = instance(hp, at, id, cid, nbytes);
  }
  hp->cur = &hp->in;
  free(sp);
  return rc;
}

/* The writer's refusal of an array above the limit of one object. */
static int too_many(hprof *hp, int rc, uint64_t at, uint64_t id) {
  if (rc == GS_ELIMIT)
    snprintf(hp->in.err, hp->in.errcap,
             "byte %llu: object array 0x%llx has more than %lu references (" GSF_ONE_OBJECT_LIMIT ")",
             (unsigned long long)at, (unsigned long long)id, (unsigned long)gs_writer_max_refs(hp->w));
  return rc;
}

static int sub_obj_array(hprof *hp, uint64_t at) {
  uint64_t id, cid, ref;
  uint32_t serial, count, i;
  size_t n = 0;
  int rc;
  if ((rc = gsf_hprof_read_id(hp, &id, "an object array")) ||
      (rc = gsf_in_u4(&hp->in, &serial, "an object array")) ||
      (rc = gsf_in_u4(&hp->in, &count, "an object array")) ||
      (rc = gsf_hprof_read_id(hp, &cid, "an object array")) ||
      (rc = gs_writer_object_begin(hp->w, id, cid,
                                   align8(2 * hp->idsize + 4 + (uint64_t)count * hp->idsize))))
    return rc;
  for (i = 0; i < count; i++) {
    if ((rc = gsf_hprof_read_id(hp, &ref, "an object array"))) return rc;
    if (!ref) continue;
    if (gs_array_reserve((void **)&hp->refs, &hp->refs_cap, n + 1, sizeof *hp->refs))
      return gsf_hprof_oom(hp);
    hp->refs[n++] = ref;
    if (n == GSF_REFS_PART) {
      if ((rc = gs_writer_refs(hp->w, hp->refs, n))) return too_many(hp, rc, at, id);
      n = 0;
    }
  }
  if ((rc = gs_writer_refs(hp->w, hp->refs, n))) return too_many(hp, rc, at, id);
  return gs_writer_object_end(hp->w);
}

/* Android's NODATA form leaves the values out: the array keeps its size. */
static int sub_prim_array(hprof *hp, uint64_t at, int nodata) {
  uint64_t id;
  uint32_t serial, count, t;
  unsigned size;
  int rc;
  if ((rc = gsf_hprof_read_id(hp, &id, "a primitive array")) ||
      (rc = gsf_in_u4(&hp->in, &serial, "a primitive array")) ||
      (rc = gsf_in_u4(&hp->in, &count, "a primitive array")) ||
      (rc = gsf_in_u1(&hp->in, &t, "a primitive array")))
    return rc;
  if (t == T_OBJECT || (size = type_size(hp, t)) == 0)
    return gsf_in_fail(&hp->in, at, "primitive array of basic type %u", t);
  if (!nodata && (rc = gsf_in_skip(&hp->in, (uint64_t)count * size, "a primitive array")))
    return rc;
  hp->prim_used |= 1u << t;
  return gs_writer_object(hp->w, id, t, align8(2 * hp->idsize + 4 + (uint64_t)count * size),
                          NULL, 0);
}

static int sub_root(hprof *hp, uint64_t at, unsigned i) {
  uint64_t id;
  int rc;
  (void)at;
  if ((rc = gsf_hprof_read_id(hp, &id, "a root record")) ||
      (rc = gsf_in_skip(&hp->in, root_table[i].ids * (uint64_t)hp->idsize + 4u * root_table[i].u4s,
                        "a root record")))
    return rc;
  if (!id || root_table[i].kind == NOT_A_ROOT) return GS_OK;
  return gs_writer_root(hp->w, id, root_table[i].kind, 0, 0);
}

static int sub_record(hprof *hp, uint64_t at, unsigned tag) {
  unsigned i;
  switch (tag) {
  case SUB_CLASS: return sub_class(hp, at);
  case SUB_INSTANCE: return sub_instance(hp, at);
  case SUB_OBJ_ARRAY: return sub_obj_array(hp, at);
  case SUB_PRIM_ARRAY: return sub_prim_array(hp, at, 0);
  case SUB_PRIM_ARRAY_NODATA: return sub_prim_array(hp, at, 1);
  default:
    for (i = 0; i < sizeof root_table / sizeof root_table[0]; i++)
      if (root_table[i].tag == tag) return sub_root(hp, at, i);
    return gsf_in_fail(&hp->in, at, "unknown heap dump sub-record 0x%02x", tag);
  }
}

/* A HEAP DUMP or HEAP DUMP SEGMENT record: sub-records up to its end. */
int gsf_hprof_heap_dump(hprof *hp, uint32_t len) {
  uint64_t end = gsf_in_offset(&hp->in) + len;
  hp->heap_dumps++;
  while (gsf_in_offset(&hp->in) < end) {
    uint64_t at = gsf_in_offset(&hp->in);
    uint32_t tag;
    int rc;
    if ((rc = gsf_in_u1(&hp->in, &tag, "a heap dump segment")) ||
        (rc = sub_record(hp, at, tag)))
      return rc;
    if (gsf_in_offset(&hp->in) > end)
      return gsf_in_fail(&hp->in, at, "sub-record 0x%02x runs past the end of its segment "
                         "(byte %llu)", tag, (unsigned long long)end);
  }
  return GS_OK;
}
