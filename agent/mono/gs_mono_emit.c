/* gs_mono_emit.c - the snapshot as text lines for the agent, written after
 * the world restarted (names allocate; sockets block).
 *
 *   s NAME                       a section: an AppDomain's objects and roots,
 *                                the root domain's first, up to the next s
 *   t ID NAME                    a type, before the objects that use it
 *   o ID TYPE SIZE [REF...]      an object and its references
 *   r ID KIND FLAGS CONTAINER    a root (CONTAINER: a type ID, statics only);
 *                                kind 0 also for an object referenced from
 *                                another AppDomain than its own
 *   e PAUSE_US MEM_BYTES IDS_BYTES  the end: the world-stopped time, the
 *                                module's added memory, the identity map it
 *                                keeps between captures (0 without stable IDs)
 *   x MESSAGE                    the capture failed (instead of the rest)
 *
 * Numbers are hexadecimal. Type IDs stay the same for a class for the life
 * of the process. Names are Mono's (mono_type_get_name) with a nested
 * type joined to its declaring type by '+' as .NET prints them
 * (Outer+Inner), where the declaring type's name is a prefix of it: not in
 * generic declaring types, which Mono prints without their arity. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <mono/utils/mono-publib.h>
#include "gs_mono.h"

static char **names;            /* by class index; NULL: not resolved yet */
static size_t names_cap;

/* Mono joins a nested type to its declaring type with '.'; .NET with '+'. */
static void mark_nesting(MonoClass *k, char *name) {
  MonoClass *outer;
  while ((outer = mono_class_get_nesting_type(k))) {
    char *o = mono_type_get_name(mono_class_get_type(outer));
    size_t n = o ? strlen(o) : 0;
    if (o && strncmp(name, o, n) == 0 && name[n] == '.') name[n] = '+';
    if (o) mono_free(o);
    k = outer;
  }
}

static char *name_of(MonoClass *k) {
  char *name = mono_type_get_name(mono_class_get_type(k)), *copy, *c;
  copy = strdup(name ? name : "?");
  if (name) mono_free(name);
  if (!copy) return NULL;
  mark_nesting(k, copy);
  for (c = copy; *c; c++)
    if (*c == '\n' || *c == '\r') *c = ' ';
  return copy;
}

int gsm_emit_prepare(char *err, size_t errcap) {
  size_t count = gsm_class_count(), i;
  if (count + 1 > names_cap) {
    char **grown = realloc(names, (count + 1) * sizeof *names);
    if (!grown) goto oom;
    memset(grown + names_cap, 0, (count + 1 - names_cap) * sizeof *names);
    names = grown;
    names_cap = count + 1;
  }
  for (i = 1; i <= count; i++)
    if (!names[i] && !(names[i] = name_of(gsm_class_at((uint32_t)i)))) goto oom;
  return 0;
oom:
  strncpy(err, "out of memory for type names", errcap - 1);
  return -1;
}

/* ---- output ---- */

static char buf[65536];
static size_t used;
static int out_fd, out_failed;

int gsm_write_all(int fd, const void *p, size_t len) {
  const char *c = p;
  while (len) {
    ssize_t n = send(fd, c, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      c += n;
      len -= (size_t)n;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      struct pollfd pf;
      pf.fd = fd;
      pf.events = POLLOUT;
      int ready = poll(&pf, 1, 60000);
      if (ready == 0 || (ready < 0 && errno != EINTR)) return -1;
    } else if (n < 0 && errno != EINTR) {
      return -1;
    }
  }
  return 0;
}

static void flush(void) {
  if (!out_failed && used && gsm_write_all(out_fd, buf, used)) out_failed = 1;
  used = 0;
}

static void put(const char *s, size_t n) {
  if (used + n > sizeof buf) flush();
  if (n > sizeof buf) {
    if (!out_failed && gsm_write_all(out_fd, s, n)) out_failed = 1;
    return;
  }
  memcpy(buf + used, s, n);
  used += n;
}

static void put_hex(char lead, uint64_t v) {
  char tmp[18], *p = tmp + sizeof tmp;
  do *--p = "0123456789abcdef"[v & 15];
  while (v >>= 4);
  *--p = lead;
  put(p, (size_t)(tmp + sizeof tmp - p));
}

static void put_line(char tag, const char *text) {
  char head[2];
  head[0] = tag;
  head[1] = ' ';
  put(head, 2);
  put(text, strlen(text));
  put("\n", 1);
}

/* An ID as the snapshot has it: an address, an identity or 0. */
static uint64_t id_value(uint32_t id) { return id & GSM_PACKED ? gsm_unpack(id) : id; }

/* Where the roots go. A section holds no references from outside it, so
 * an object referenced from another AppDomain than its own, and named by
 * no root, is rooted once in its own, as held by the runtime (kind 0),
 * which it is for the other domain: else it might read as unreachable. */
typedef struct placing {
  unsigned char *root_dom;     /* each root's AppDomain: its object's, or the
                                * root domain's when the walk did not meet it */
  gsm_map crossed;             /* objects referenced across: ID -> domain + 1 */
} placing;

/* References whose object's domain is asked for ahead of its lookup: the
 * map of millions of objects misses the cache on nearly every one. */
#define LOOKUP_AHEAD 16

/* Just past the references of o, the first of which is at j: the last one
 * has its bit set in last. */
static size_t refs_end(const gsm_snap *s, const gsm_obj *o, size_t j) {
  const uint64_t *last = (const uint64_t *)s->last.p;
  if (!(o->size & GSM_HAS_REFS)) return j;
  while (j < s->refs.len && !(last[j / 64] >> (j % 64) & 1)) j++;
  return j < s->refs.len ? j + 1 : j;
}

/* The objects of other domains than o's that o references (refs[from..to)),
 * into crossed. */
static int note_crossing(placing *p, const gsm_map *owner, const gsm_snap *s, const gsm_obj *o,
                         size_t from, size_t to) {
  const uint32_t *ref = (const uint32_t *)s->refs.p;
  size_t k;
  for (k = from; k < to; k++) {
    uint32_t v;
    if (k + LOOKUP_AHEAD < s->refs.len && ref[k + LOOKUP_AHEAD])
      gsm_map_prefetch(owner, id_value(ref[k + LOOKUP_AHEAD]));
    v = ref[k] ? gsm_map_get(owner, id_value(ref[k])) : 0;
    if (v && v - 1 != gsm_obj_domain(o) && gsm_map_put_grow(&p->crossed, id_value(ref[k]), v)) return -1;
  }
  return 0;
}

/* An object referenced across that a root names already is rooted there. */
static int place(placing *p, const gsm_map *owner, const gsm_snap *s) {
  const gsm_obj *o = (const gsm_obj *)s->objs.p;
  const gsm_root *r = (const gsm_root *)s->roots.p;
  size_t i, j, end;
  for (i = 0, j = 0; i < s->objs.len; i++, j = end) {
    end = refs_end(s, &o[i], j);
    if (note_crossing(p, owner, s, &o[i], j, end)) return -1;
  }
  for (i = 0; i < s->roots.len; i++) {
    uint32_t v = gsm_map_get(owner, r[i].id);
    p->root_dom[i] = v ? (unsigned char)(v - 1) : 0;
    if (v) (void)gsm_map_del(&p->crossed, r[i].id, NULL);
  }
  return 0;
}

/* Fills in p: 0, or -1 when memory ran out. */
static int placing_init(placing *p, const gsm_snap *s) {
  const gsm_obj *o = (const gsm_obj *)s->objs.p;
  gsm_map owner = {NULL, 0, 0, 0};
  size_t i;
  int err;
  memset(p, 0, sizeof *p);
  if (!(p->root_dom = calloc(s->roots.len + 1, 1))) return -1;
  if (s->ndomains == 1) return 0;
  if (gsm_map_init(&owner, s->objs.len) || gsm_map_init(&p->crossed, 16)) {
    gsm_map_free(&owner);
    return -1;
  }
  for (i = 0; i < s->objs.len; i++) {
    if (i + LOOKUP_AHEAD < s->objs.len) gsm_map_prefetch(&owner, id_value(o[i + LOOKUP_AHEAD].id));
    gsm_map_put(&owner, id_value(o[i].id), gsm_obj_domain(&o[i]) + 1);
  }
  err = place(p, &owner, s);
  gsm_map_free(&owner);
  return err;
}

static void placing_free(placing *p) {
  free(p->root_dom);
  gsm_map_free(&p->crossed);
}

/* The types domain d's objects and static roots name, once each. */
static void emit_types(const gsm_snap *s, unsigned d, const unsigned char *root_dom) {
  const gsm_obj *o = (const gsm_obj *)s->objs.p;
  const gsm_root *r = (const gsm_root *)s->roots.p;
  size_t ntypes = gsm_class_count(), i;
  unsigned char *seen = calloc(ntypes + 1, 1);
  for (i = 0; i < s->objs.len + s->roots.len; i++) {
    size_t k = i - s->objs.len;
    uint32_t t = i < s->objs.len ? gsm_obj_class(&o[i]) : r[k].container;
    if (i < s->objs.len ? gsm_obj_domain(&o[i]) != d : root_dom[k] != d) continue;
    if (!t || (seen && seen[t])) continue;
    if (seen) seen[t] = 1;
    put("t", 1);
    put_hex(' ', t);
    put(" ", 1);
    put(names[t], strlen(names[t]));
    put("\n", 1);
  }
  free(seen);
}

static void emit_object(const gsm_obj *o, const uint32_t *ref, size_t n) {
  size_t k;
  put("o", 1);
  put_hex(' ', id_value(o->id));
  put_hex(' ', gsm_obj_class(o));
  put_hex(' ', o->size & GSM_SIZE_MAX);
  for (k = 0; k < n; k++) put_hex(' ', id_value(ref[k]));
  put("\n", 1);
}

/* Domain d's objects; the others' references are passed over. */
static void emit_objects(const gsm_snap *s, unsigned d) {
  const gsm_obj *o = (const gsm_obj *)s->objs.p;
  const uint32_t *ref = (const uint32_t *)s->refs.p;
  size_t i, j, end;
  for (i = 0, j = 0; i < s->objs.len && !out_failed; i++, j = end) {
    end = refs_end(s, &o[i], j);
    if (gsm_obj_domain(&o[i]) == d) emit_object(&o[i], ref + j, end - j);
  }
}

static void put_root(uint64_t id, unsigned kind, unsigned flags, uint32_t container) {
  put("r", 1);
  put_hex(' ', id);
  put_hex(' ', kind);
  put_hex(' ', flags);
  put_hex(' ', container);
  put("\n", 1);
}

static void emit_roots(const gsm_snap *s, unsigned d, const placing *p) {
  const gsm_root *r = (const gsm_root *)s->roots.p;
  size_t i;
  for (i = 0; i < s->roots.len && !out_failed; i++)
    if (p->root_dom[i] == d) put_root(r[i].id, r[i].kind, r[i].flags, r[i].container);
  for (i = 0; i < p->crossed.n && !out_failed; i++)
    if (p->crossed.slots[i].value == d + 1) put_root(gsm_slot_key(&p->crossed.slots[i]), 0, 0, 0);
}

int gsm_emit(int fd, const gsm_snap *s, char *const *domains) {
  placing p;
  unsigned d;
  out_fd = fd;
  out_failed = placing_init(&p, s) != 0;
  used = 0;
  for (d = 0; d < s->ndomains && !out_failed; d++) {
    put_line('s', domains[d]);
    emit_types(s, d, p.root_dom);
    emit_objects(s, d);
    emit_roots(s, d, &p);
  }
  placing_free(&p);
  put("e", 1);
  put_hex(' ', s->pause_us);
  put_hex(' ', s->mem_bytes);
  put_hex(' ', s->ids_bytes);
  put("\n", 1);
  flush();
  return out_failed ? -1 : 0;
}
