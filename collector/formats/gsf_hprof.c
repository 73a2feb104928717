/* gsf_hprof.c - HPROF heap dumps (JAVA PROFILE 1.0.x) as records.
 *
 * One pass: strings and LOAD CLASS records (which HotSpot writes before the
 * heap) give the class names; each class dump adds the class's field types
 * to a flat table, and each instance is decoded with its class chain's
 * reference offsets, computed once per class. Objects go to the writer as
 * they are read, so memory grows with the classes, not with the heap. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_array.h"
#include "gs_error.h"
#include "gs_idmap.h"
#include "gsf_format.h"
#include "gsf_hprof.h"
#include "gsf_in.h"
#include "gsf_text.h"

#define MAGIC "JAVA PROFILE 1.0."
#define MAGIC_LEN 17
#define HEADER_MAX 64
/* References of one object: as many as the record reader takes. */
#define MAX_REFS GS_READER_DEFAULT_MAX_REFS
/* Bytes kept of all strings together (only class names are used). */
#define MAX_STRING_BYTES (512u << 20)
#define NONE UINT32_MAX

enum { T_OBJECT = 2, T_BOOLEAN = 4, T_LONG = 11 };
enum { TAG_STRING = 0x01, TAG_LOAD_CLASS = 0x02, TAG_HEAP_DUMP = 0x0c,
       TAG_HEAP_DUMP_SEGMENT = 0x1c, TAG_HEAP_DUMP_END = 0x2c };
enum { SUB_CLASS = 0x20, SUB_INSTANCE = 0x21, SUB_OBJ_ARRAY = 0x22, SUB_PRIM_ARRAY = 0x23,
       SUB_PRIM_ARRAY_NODATA = 0xc3 };   /* Android: a primitive array without its values */
/* A sub-record in root_table that names an object without rooting it. */
#define NOT_A_ROOT 0xff
/* The type ID of class objects when the dump never names java/lang/Class;
 * primitive arrays use their basic type (4-11) as type ID. */
#define CLASS_TYPE_FALLBACK 1u

typedef struct hp_class {
  uint64_t id, super, loader;
  uint64_t name;             /* string ID of the name; 0: none */
  uint32_t field0, nfields;  /* this class's instance field types in fields[] */
  uint32_t layout, nrefs;    /* the chain's reference offsets in refoffs[]; NONE: not yet */
  uint32_t bytes;            /* instance bytes of the whole chain */
  uint32_t referent;         /* of those references, the one that holds weakly; NONE: none */
  int dumped;
} hp_class;

typedef struct hp_string { size_t off; uint32_t len; } hp_string;

typedef struct hprof {
  gsf_in in;
  gsf_in *cur;               /* where objects are read: in, or the spill */
  FILE *spill;               /* instances read before their class dump */
  uint64_t deferred;
  gs_writer *w;
  unsigned idsize;
  gs_idmap strmap;           /* string ID -> index in strs */
  hp_string *strs;
  size_t nstrs, strs_cap;
  char *arena;
  size_t arena_len, arena_cap;
  gs_idmap classmap;         /* class ID -> index in classes */
  hp_class *classes;
  size_t nclasses, classes_cap;
  uint32_t *dumped;          /* indices in classes of this dump's class dumps */
  size_t ndumped, dumped_cap;
  unsigned char *fields;
  size_t nfields, fields_cap;
  uint32_t *refoffs;
  size_t nrefoffs, refoffs_cap;
  uint64_t *refs;
  size_t refs_cap;
  uint64_t class_type;       /* type of class objects */
  uint64_t reference_class;  /* java.lang.ref.Reference, or 0 */
  uint32_t referent_field;   /* its field "referent" among its own, or NONE */
  unsigned prim_used;        /* bit per basic type seen in a primitive array */
  int heap_dumps;            /* HEAP DUMP and HEAP DUMP SEGMENT records */
  int dump_closed;           /* the last dump is whole: a HEAP DUMP, or segments and their END */
} hprof;

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

static const char *const prim_names[12] = {
  [4] = "boolean[]", [5] = "char[]", [6] = "float[]", [7] = "double[]",
  [8] = "byte[]", [9] = "short[]", [10] = "int[]", [11] = "long[]"};

int gsf_hprof_sniff(const unsigned char *head, size_t n) {
  return n >= MAGIC_LEN && memcmp(head, MAGIC, MAGIC_LEN) == 0;
}

static uint64_t align8(uint64_t n) { return (n + 7) & ~(uint64_t)7; }

/* Bytes of a value of basic type t, or 0 for a type HPROF does not have. */
static unsigned type_size(const hprof *hp, unsigned t) {
  static const unsigned char sizes[12] = {0, 0, 0, 0, 1, 2, 4, 8, 1, 2, 4, 8};
  if (t == T_OBJECT) return hp->idsize;
  return t < 12 ? sizes[t] : 0;
}

static int read_id(hprof *hp, uint64_t *v, const char *what) {
  return gsf_in_uint(hp->cur, hp->idsize, v, what);
}

static int oom(hprof *hp) {
  snprintf(hp->in.err, hp->in.errcap, "out of memory at byte %llu",
           (unsigned long long)gsf_in_offset(&hp->in));
  return GS_ENOMEM;
}

/* ---- strings and class names ----------------------------------------- */

static int rec_string(hprof *hp, uint64_t at, uint32_t len) {
  uint64_t id;
  uint32_t keep;
  gs_idmap_slot *slot;
  int rc;
  if (len < hp->idsize) return gsf_in_fail(&hp->in, at, "string record shorter than an ID");
  if ((rc = read_id(hp, &id, "a string record"))) return rc;
  len -= hp->idsize;
  keep = len < GSF_NAME_MAX ? len : GSF_NAME_MAX;
  if (hp->arena_len + keep > MAX_STRING_BYTES) {
    snprintf(hp->in.err, hp->in.errcap, "byte %llu: the strings exceed the limit of %u MiB",
             (unsigned long long)at, MAX_STRING_BYTES >> 20);
    return GS_ELIMIT;
  }
  if (gs_array_reserve((void **)&hp->arena, &hp->arena_cap, hp->arena_len + keep + 1, 1) ||
      gs_array_reserve((void **)&hp->strs, &hp->strs_cap, hp->nstrs + 1, sizeof *hp->strs) ||
      gs_idmap_put(&hp->strmap, id, &slot) < 0)
    return oom(hp);
  if ((rc = gsf_in_bytes(&hp->in, hp->arena + hp->arena_len, keep, "a string record")) ||
      (rc = gsf_in_skip(&hp->in, len - keep, "a string record")))
    return rc;
  slot->value = (uint32_t)hp->nstrs;
  hp->strs[hp->nstrs].off = hp->arena_len;
  hp->strs[hp->nstrs++].len = keep;
  hp->arena_len += keep;
  return GS_OK;
}

/* The string with ID id, or NULL. */
static const char *string_of(const hprof *hp, uint64_t id, size_t *len) {
  const gs_idmap_slot *slot = id ? gs_idmap_find(&hp->strmap, id) : NULL;
  if (!slot) return NULL;
  *len = hp->strs[slot->value].len;
  return hp->arena + hp->strs[slot->value].off;
}

/* ---- classes ---------------------------------------------------------- */

static hp_class *class_find(const hprof *hp, uint64_t id) {
  const gs_idmap_slot *slot = gs_idmap_find(&hp->classmap, id);
  return slot ? &hp->classes[slot->value] : NULL;
}

static int class_get(hprof *hp, uint64_t id, hp_class **out) {
  gs_idmap_slot *slot;
  int rc;
  if (gs_array_reserve((void **)&hp->classes, &hp->classes_cap, hp->nclasses + 1,
                       sizeof *hp->classes) ||
      (rc = gs_idmap_put(&hp->classmap, id, &slot)) < 0)
    return oom(hp);
  if (rc == 1) {
    hp_class *c = &hp->classes[hp->nclasses];
    memset(c, 0, sizeof *c);
    c->id = id;
    c->layout = NONE;
    slot->value = (uint32_t)hp->nclasses++;
  }
  *out = &hp->classes[slot->value];
  return GS_OK;
}

static int rec_load_class(hprof *hp, uint64_t at, uint32_t len) {
  uint32_t serial;
  uint64_t id, name;
  hp_class *c;
  const char *s;
  size_t n;
  int rc;
  if (len != 8 + 2 * hp->idsize)
    return gsf_in_fail(&hp->in, at, "LOAD CLASS record of %lu bytes (expected %u)",
                       (unsigned long)len, 8 + 2 * hp->idsize);
  if ((rc = gsf_in_u4(&hp->in, &serial, "a LOAD CLASS record")) ||
      (rc = read_id(hp, &id, "a LOAD CLASS record")) ||
      (rc = gsf_in_u4(&hp->in, &serial, "a LOAD CLASS record")) ||
      (rc = read_id(hp, &name, "a LOAD CLASS record")) || (rc = class_get(hp, id, &c)))
    return rc;
  c->name = name;
  s = string_of(hp, name, &n);
  if (s && n == 15 && memcmp(s, "java/lang/Class", 15) == 0) hp->class_type = id;
  if (s && n == 23 && memcmp(s, "java/lang/ref/Reference", 23) == 0) hp->reference_class = id;
  return GS_OK;
}

/* Computes c's chain layout: its own instance fields, then its
 * superclass's, up to java.lang.Object, as HPROF lays out an instance. */
static int class_layout(hprof *hp, hp_class *c, uint64_t at) {
  uint32_t start = (uint32_t)hp->nrefoffs;
  uint64_t off = 0;
  size_t steps = 0, i;
  const hp_class *k;
  c->referent = NONE;
  for (k = c; k; k = k->super ? class_find(hp, k->super) : NULL) {
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
          return oom(hp);
        if (k->id == hp->reference_class && i == hp->referent_field)
          c->referent = (uint32_t)(hp->nrefoffs - start);
        hp->refoffs[hp->nrefoffs++] = (uint32_t)off;
      }
      off += type_size(hp, t);
    }
    if (off > UINT32_MAX) return gsf_in_fail(&hp->in, at, "class 0x%llx is too large",
                                             (unsigned long long)c->id);
    if (k->super && !class_find(hp, k->super))
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
  if (t == T_OBJECT) return read_id(hp, ref, "a class dump");
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
    if ((rc = read_id(hp, &name, "a class dump")) ||
        (rc = gsf_in_u1(&hp->in, &t, "a class dump")) ||
        (rc = read_value(hp, at, t, &ref, bytes)))
      break;
    if (ref) rc = gs_writer_root(hp->w, ref, GS_ROOT_STATIC, 0, id);
  }
  return rc;
}

static int is_named(const hprof *hp, uint64_t name, const char *want) {
  size_t n;
  const char *s = string_of(hp, name, &n);
  return s && n == strlen(want) && memcmp(s, want, n) == 0;
}

static int class_fields(hprof *hp, uint64_t at, hp_class *c) {
  uint32_t n, i, t;
  uint64_t name;
  int rc = gsf_in_u2(&hp->in, &n, "a class dump");
  if (rc) return rc;
  if (gs_array_reserve((void **)&hp->fields, &hp->fields_cap, hp->nfields + n, 1))
    return oom(hp);
  c->field0 = (uint32_t)hp->nfields;
  c->nfields = n;
  for (i = 0; i < n; i++) {
    if ((rc = read_id(hp, &name, "a class dump")) ||
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
  if ((rc = read_id(hp, &id, "a class dump")) ||
      (rc = gsf_in_u4(&hp->in, &serial, "a class dump")) ||
      (rc = read_id(hp, &super, "a class dump")) || (rc = read_id(hp, &loader, "a class dump")) ||
      (rc = gsf_in_skip(&hp->in, 4 * (uint64_t)hp->idsize, "a class dump")) ||
      (rc = gsf_in_u4(&hp->in, &size, "a class dump")) || (rc = class_get(hp, id, &c)))
    return rc;
  if (c->dumped)
    return gsf_in_fail(&hp->in, at, "class 0x%llx is dumped twice", (unsigned long long)id);
  if (gs_array_reserve((void **)&hp->dumped, &hp->dumped_cap, hp->ndumped + 1, sizeof *hp->dumped))
    return oom(hp);
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
  if (gs_array_reserve((void **)&hp->refs, &hp->refs_cap, c->nrefs, sizeof *hp->refs))
    return oom(hp);
  *n = 0;
  *weak = 0;
  for (i = 0; i < c->nrefs; i++) {
    uint32_t off = hp->refoffs[c->layout + i];
    uint64_t ref;
    if ((rc = gsf_in_skip(hp->cur, off - pos, "an instance dump")) ||
        (rc = read_id(hp, &ref, "an instance dump")))
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
  hp_class *c = class_find(hp, cid);
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
    c = class_find(hp, c->super);
  }
  return 0;
}

static int sub_instance(hprof *hp, uint64_t at) {
  uint64_t id, cid;
  uint32_t serial, nbytes;
  const hp_class *c;
  int rc;
  if ((rc = read_id(hp, &id, "an instance dump")) ||
      (rc = gsf_in_u4(&hp->in, &serial, "an instance dump")) ||
      (rc = read_id(hp, &cid, "an instance dump")) ||
      (rc = gsf_in_u4(&hp->in, &nbytes, "an instance dump")))
    return rc;
  c = class_find(hp, cid);
  if (!c || (c->layout == NONE && !chain_dumped(hp, c))) return defer(hp, at, id, cid, nbytes);
  return instance(hp, at, id, cid, nbytes);
}

static int spill_read(void *ctx, void *buf, size_t cap, size_t *got) {
  FILE *f = ctx;
  *got = fread(buf, 1, cap, f);
  return ferror(f) ? GS_EIO : GS_OK;
}

/* The deferred instances, now that every class dump has been read. */
static int replay_deferred(hprof *hp) {
  gsf_in *sp;
  uint64_t i, at, id, cid;
  uint32_t nbytes;
  int rc = GS_OK;
  if (!hp->deferred) return GS_OK;
  if (fflush(hp->spill) || fseek(hp->spill, 0, SEEK_SET) || !(sp = malloc(sizeof *sp)))
    return oom(hp);
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

static int sub_obj_array(hprof *hp, uint64_t at) {
  uint64_t id, cid, ref;
  uint32_t serial, count, i;
  size_t n = 0, written = 0;
  int rc;
  if ((rc = read_id(hp, &id, "an object array")) ||
      (rc = gsf_in_u4(&hp->in, &serial, "an object array")) ||
      (rc = gsf_in_u4(&hp->in, &count, "an object array")) ||
      (rc = read_id(hp, &cid, "an object array")) ||
      (rc = gs_writer_object_begin(hp->w, id, cid,
                                   align8(2 * hp->idsize + 4 + (uint64_t)count * hp->idsize))))
    return rc;
  for (i = 0; i < count; i++) {
    if ((rc = read_id(hp, &ref, "an object array"))) return rc;
    if (!ref) continue;
    if (written + n == MAX_REFS) {
      snprintf(hp->in.err, hp->in.errcap,
               "byte %llu: object array 0x%llx has more than %u references (the limit of one object)",
               (unsigned long long)at, (unsigned long long)id, MAX_REFS);
      return GS_ELIMIT;
    }
    if (gs_array_reserve((void **)&hp->refs, &hp->refs_cap, n + 1, sizeof *hp->refs))
      return oom(hp);
    hp->refs[n++] = ref;
    if (n == GSF_REFS_PART) {
      if ((rc = gs_writer_refs(hp->w, hp->refs, n))) return rc;
      written += n;
      n = 0;
    }
  }
  if ((rc = gs_writer_refs(hp->w, hp->refs, n))) return rc;
  return gs_writer_object_end(hp->w);
}

/* Android's NODATA form leaves the values out: the array keeps its size. */
static int sub_prim_array(hprof *hp, uint64_t at, int nodata) {
  uint64_t id;
  uint32_t serial, count, t;
  unsigned size;
  int rc;
  if ((rc = read_id(hp, &id, "a primitive array")) ||
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
  if ((rc = read_id(hp, &id, "a root record")) ||
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
static int heap_dump(hprof *hp, uint32_t len) {
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

/* ---- the file --------------------------------------------------------- */

static int header(hprof *hp) {
  char text[HEADER_MAX];
  uint32_t idsize, c;
  uint64_t stamp;
  size_t n = 0;
  int rc;
  do {
    if ((rc = gsf_in_u1(&hp->in, &c, "the file header"))) return rc;
    text[n++] = (char)c;
  } while (c && n < HEADER_MAX);
  if (c || !gsf_hprof_sniff((const unsigned char *)text, n))
    return gsf_in_fail(&hp->in, 0, "not an HPROF header (expected \"JAVA PROFILE 1.0.x\")");
  if ((rc = gsf_in_u4(&hp->in, &idsize, "the file header")) ||
      (rc = gsf_in_u8(&hp->in, &stamp, "the file header")))
    return rc;
  if (idsize != 4 && idsize != 8)
    return gsf_in_fail(&hp->in, n, "identifier size %lu (only 4 and 8 are defined)",
                       (unsigned long)idsize);
  hp->idsize = idsize;
  return GS_OK;
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

/* Type records for every class the dump dumped, in the order their names
 * came, and for every primitive array type. */
static int write_types(hprof *hp) {
  char name[GSF_NAME_MAX];
  size_t i, n, len;
  unsigned t;
  int rc = GS_OK;
  if (hp->ndumped) qsort(hp->dumped, hp->ndumped, sizeof *hp->dumped, cmp_u32);
  for (i = 0; i < hp->ndumped && !rc; i++) {
    const hp_class *c = &hp->classes[hp->dumped[i]];
    const char *s = string_of(hp, c->name, &n);
    len = s && n ? gsf_text_java_name(name, sizeof name, s, n) : 0;
    if (!len) len = (size_t)snprintf(name, sizeof name, "class@0x%llx", (unsigned long long)c->id);
    rc = gs_writer_type(hp->w, c->id, name, len);
  }
  for (t = T_BOOLEAN; t <= T_LONG && !rc; t++)
    if (hp->prim_used & (1u << t)) rc = gs_writer_type(hp->w, t, prim_names[t], strlen(prim_names[t]));
  if (!rc && hp->class_type == CLASS_TYPE_FALLBACK)
    rc = gs_writer_type(hp->w, CLASS_TYPE_FALLBACK, "java.lang.Class", 15);
  return rc;
}

/* Closes a dump's section: its deferred instances, then its types. */
static int end_section(hprof *hp) {
  int rc;
  if ((rc = replay_deferred(hp)) || (rc = write_types(hp))) return rc;
  return gs_writer_end(hp->w, "hprof", 5, 0);
}

/* A file may hold several dumps (the JDK's hprof agent writes one each time
 * it is asked): each is a section of its own, which dumps its classes again,
 * so the next is read as if it were the first but for the names. */
static int next_section(hprof *hp) {
  size_t i;
  int rc;
  if ((rc = end_section(hp))) return rc;
  for (i = 0; i < hp->ndumped; i++) {
    hp->classes[hp->dumped[i]].dumped = 0;
    hp->classes[hp->dumped[i]].layout = NONE;
  }
  hp->nfields = hp->nrefoffs = hp->ndumped = 0;
  hp->prim_used = 0;
  hp->deferred = 0;
  if (hp->spill) fclose(hp->spill);
  hp->spill = NULL;
  return gs_writer_section(hp->w, 2, "hprof", 5, 0);
}

/* A HEAP DUMP (whole) or a HEAP DUMP SEGMENT: after a whole dump, the
 * first of the next one. */
static int dump_record(hprof *hp, uint32_t len, int whole) {
  int rc;
  if (hp->heap_dumps && hp->dump_closed && (rc = next_section(hp))) return rc;
  hp->dump_closed = whole;
  return heap_dump(hp, len);
}

static int record(hprof *hp) {
  uint64_t at = gsf_in_offset(&hp->in);
  uint32_t tag, time, len;
  int rc;
  if ((rc = gsf_in_u1(&hp->in, &tag, "a record header")) ||
      (rc = gsf_in_u4(&hp->in, &time, "a record header")) ||
      (rc = gsf_in_u4(&hp->in, &len, "a record header")))
    return rc;
  switch (tag) {
  case TAG_STRING: return rec_string(hp, at, len);
  case TAG_LOAD_CLASS: return rec_load_class(hp, at, len);
  case TAG_HEAP_DUMP_SEGMENT: return dump_record(hp, len, 0);
  case TAG_HEAP_DUMP: return dump_record(hp, len, 1);
  case TAG_HEAP_DUMP_END:
    hp->dump_closed = 1;
    return gsf_in_skip(&hp->in, len, "a record");
  default: return gsf_in_skip(&hp->in, len, "a record");
  }
}

static int convert(hprof *hp) {
  int rc, at_end;
  if ((rc = header(hp)) || (rc = gs_writer_section(hp->w, 2, "hprof", 5, 0))) return rc;
  for (;;) {
    if ((rc = gsf_in_at_end(&hp->in, &at_end))) return rc;
    if (at_end) break;
    if ((rc = record(hp))) return rc;
  }
  if (!hp->heap_dumps || !hp->dump_closed) {
    snprintf(hp->in.err, hp->in.errcap, "the file ends at byte %llu without %s (truncated file?)",
             (unsigned long long)gsf_in_offset(&hp->in),
             hp->heap_dumps ? "the HEAP DUMP END record" : "a heap dump");
    return GS_EFORMAT;
  }
  return end_section(hp);
}

int gsf_hprof_convert(gs_read_fn in, void *in_ctx, gs_writer *w, char *err, size_t cap) {
  hprof *hp = calloc(1, sizeof *hp);
  int rc;
  if (!hp) { snprintf(err, cap, "out of memory"); return GS_ENOMEM; }
  gsf_in_init(&hp->in, in, in_ctx, err, cap);
  hp->cur = &hp->in;
  hp->w = w;
  hp->referent_field = NONE;
  if (gs_idmap_init(&hp->strmap, 1024) || gs_idmap_init(&hp->classmap, 1024)) rc = oom(hp);
  else rc = convert(hp);
  if (rc && !err[0]) snprintf(err, cap, "byte %llu: %s", (unsigned long long)gsf_in_offset(&hp->in),
                              gs_strerror(rc));
  gs_idmap_free(&hp->strmap);
  gs_idmap_free(&hp->classmap);
  free(hp->strs);
  free(hp->arena);
  free(hp->classes);
  free(hp->dumped);
  free(hp->fields);
  free(hp->refoffs);
  free(hp->refs);
  if (hp->spill) fclose(hp->spill);
  free(hp);
  return rc;
}
