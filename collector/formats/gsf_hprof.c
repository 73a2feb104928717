/* gsf_hprof.c - HPROF heap dumps (JAVA PROFILE 1.0.x) as records: the file.
 *
 * One pass: strings and LOAD CLASS records (which HotSpot writes before the
 * heap) give the class names; each heap dump (gsf_hprof_heap.c) is a
 * section, whose class dumps add their field types to a flat table and
 * whose instances are decoded with their class chain's reference offsets,
 * computed once per class. Objects go to the writer as they are read, so
 * memory grows with the classes, not with the heap. */
#include <stdlib.h>
#include <string.h>
#include "gs_array.h"
#include "gs_error.h"
#include "gsf_format.h"
#include "gsf_hprof.h"
#include "gsf_hprof_int.h"
#include "gsf_text.h"

#define MAGIC "JAVA PROFILE 1.0."
#define MAGIC_LEN 17
#define HEADER_MAX 64
/* Bytes kept of all strings together (only class names are used). */
#define MAX_STRING_BYTES (512u << 20)

enum { TAG_STRING = 0x01, TAG_LOAD_CLASS = 0x02, TAG_HEAP_DUMP = 0x0c,
       TAG_HEAP_DUMP_SEGMENT = 0x1c, TAG_HEAP_DUMP_END = 0x2c };

static const char *const prim_names[12] = {
  [4] = "boolean[]", [5] = "char[]", [6] = "float[]", [7] = "double[]",
  [8] = "byte[]", [9] = "short[]", [10] = "int[]", [11] = "long[]"};

int gsf_hprof_sniff(const unsigned char *head, size_t n) {
  return n >= MAGIC_LEN && memcmp(head, MAGIC, MAGIC_LEN) == 0;
}

int gsf_hprof_oom(hprof *hp) {
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
  if ((rc = gsf_hprof_read_id(hp, &id, "a string record"))) return rc;
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
    return gsf_hprof_oom(hp);
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
const char *gsf_hprof_string_of(const hprof *hp, uint64_t id, size_t *len) {
  const gs_idmap_slot *slot = id ? gs_idmap_find(&hp->strmap, id) : NULL;
  if (!slot) return NULL;
  *len = hp->strs[slot->value].len;
  return hp->arena + hp->strs[slot->value].off;
}

/* ---- classes ---------------------------------------------------------- */

int gsf_hprof_class_get(hprof *hp, uint64_t id, hp_class **out) {
  gs_idmap_slot *slot;
  int rc;
  if (gs_array_reserve((void **)&hp->classes, &hp->classes_cap, hp->nclasses + 1,
                       sizeof *hp->classes) ||
      (rc = gs_idmap_put(&hp->classmap, id, &slot)) < 0)
    return gsf_hprof_oom(hp);
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
      (rc = gsf_hprof_read_id(hp, &id, "a LOAD CLASS record")) ||
      (rc = gsf_in_u4(&hp->in, &serial, "a LOAD CLASS record")) ||
      (rc = gsf_hprof_read_id(hp, &name, "a LOAD CLASS record")) || (rc = gsf_hprof_class_get(hp, id, &c)))
    return rc;
  c->name = name;
  s = gsf_hprof_string_of(hp, name, &n);
  if (s && n == 15 && memcmp(s, "java/lang/Class", 15) == 0) hp->class_type = id;
  if (s && n == 23 && memcmp(s, "java/lang/ref/Reference", 23) == 0) hp->reference_class = id;
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
    const char *s = gsf_hprof_string_of(hp, c->name, &n);
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
  if ((rc = gsf_hprof_replay_deferred(hp)) || (rc = write_types(hp))) return rc;
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
  return gsf_hprof_heap_dump(hp, len);
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
  if (gs_idmap_init(&hp->strmap, 1024) || gs_idmap_init(&hp->classmap, 1024)) rc = gsf_hprof_oom(hp);
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
