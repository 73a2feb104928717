/* gs_demo.c - the contacts application: its types, its start-up and one
 * step of a user session.
 *
 * Every object pointer held across an allocation lives in a local slot
 * registered with the runtime (see gs_rt.h), and field addresses are taken
 * only after the last allocation of a statement: collections move objects. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_demo.h"
#include "gs_error.h"

#define BODY(o, T) ((T *)gs_rt_body(o))

/* ---- object layouts ---- */

typedef struct app_body { gs_rt_obj *store, *images, *log, *sync; } app_body;
typedef struct store_body { gs_rt_obj *contacts, *changed; int32_t version; } store_body;
typedef struct list_body { gs_rt_obj *items; int32_t count, version; } list_body;
typedef struct contact_body {
  gs_rt_obj *first, *last, *phone, *email, *address, *photo;
  int64_t id;
} contact_body;
typedef struct address_body { gs_rt_obj *label, *street, *city; int32_t zip; } address_body;
typedef struct bitmap_body { gs_rt_obj *pixels; int32_t width, height; int64_t native; } bitmap_body;
typedef struct cache_body { gs_rt_obj *bitmaps, *keys; int32_t next, hits, misses; } cache_body;
typedef struct log_body { gs_rt_obj *entries; int32_t next; } log_body;
typedef struct entry_body { gs_rt_obj *message, *source; int64_t ticks; int32_t level; } entry_body;
typedef struct page_body { gs_rt_obj *contact, *title, *handler, *photo; } page_body;
typedef struct handler_body { gs_rt_obj *target; int64_t method; } handler_body;
typedef struct sync_body { gs_rt_obj *buffer; int32_t received; } sync_body;

#define O(T, f) offsetof(T, f)
static const size_t app_refs[] = {O(app_body, store), O(app_body, images), O(app_body, log),
                                  O(app_body, sync)};
static const size_t store_refs[] = {O(store_body, contacts), O(store_body, changed)};
static const size_t list_refs[] = {O(list_body, items)};
static const size_t contact_refs[] = {O(contact_body, first), O(contact_body, last),
                                      O(contact_body, phone), O(contact_body, email),
                                      O(contact_body, address), O(contact_body, photo)};
static const size_t address_refs[] = {O(address_body, label), O(address_body, street),
                                      O(address_body, city)};
static const size_t bitmap_refs[] = {O(bitmap_body, pixels)};
static const size_t cache_refs[] = {O(cache_body, bitmaps), O(cache_body, keys)};
static const size_t log_refs[] = {O(log_body, entries)};
static const size_t entry_refs[] = {O(entry_body, message), O(entry_body, source)};
static const size_t page_refs[] = {O(page_body, contact), O(page_body, title),
                                   O(page_body, handler), O(page_body, photo)};
static const size_t handler_refs[] = {O(handler_body, target)};
static const size_t sync_refs[] = {O(sync_body, buffer)};

enum {
  T_PROGRAM, T_APP, T_STORE, T_CONTACT_LIST, T_CONTACT_ARRAY, T_CONTACT, T_ADDRESS,
  T_BITMAP, T_BITMAP_ARRAY, T_INT32_ARRAY, T_CACHE, T_LOG, T_ENTRY, T_ENTRY_ARRAY,
  T_PAGE, T_HANDLER, T_HANDLER_LIST, T_HANDLER_ARRAY, T_SYNC, T_COUNT
};

#define REFS(a) (a), sizeof(a) / sizeof((a)[0])
#define HANDLER "System.EventHandler`1[[Contoso.Contacts.ContactChangedEventArgs, Contacts]]"
static const gs_rt_type_desc demo_types[T_COUNT] = {
  {"Contoso.Contacts.Program", GS_RT_INSTANCE, 0, NULL, 0, 0},
  {"Contoso.Contacts.App", GS_RT_INSTANCE, sizeof(app_body), REFS(app_refs), 0},
  {"Contoso.Contacts.ContactStore", GS_RT_INSTANCE, sizeof(store_body), REFS(store_refs), 0},
  {"System.Collections.Generic.List`1[[Contoso.Contacts.Contact, Contacts]]",
   GS_RT_INSTANCE, sizeof(list_body), REFS(list_refs), 0},
  {"Contoso.Contacts.Contact[]", GS_RT_REF_ARRAY, 0, NULL, 0, 0},
  {"Contoso.Contacts.Contact", GS_RT_INSTANCE, sizeof(contact_body), REFS(contact_refs), 0},
  {"Contoso.Contacts.PostalAddress", GS_RT_INSTANCE, sizeof(address_body),
   REFS(address_refs), 0},
  {"Contoso.Imaging.Bitmap", GS_RT_INSTANCE, sizeof(bitmap_body), REFS(bitmap_refs),
   GS_RT_FINALIZABLE},
  {"Contoso.Imaging.Bitmap[]", GS_RT_REF_ARRAY, 0, NULL, 0, 0},
  {"System.Int32[]", GS_RT_DATA_ARRAY, 4, NULL, 0, 0},
  {"Contoso.Imaging.ImageCache", GS_RT_INSTANCE, sizeof(cache_body), REFS(cache_refs), 0},
  {"Contoso.Diagnostics.EventLog", GS_RT_INSTANCE, sizeof(log_body), REFS(log_refs), 0},
  {"Contoso.Diagnostics.LogEntry", GS_RT_INSTANCE, sizeof(entry_body), REFS(entry_refs), 0},
  {"Contoso.Diagnostics.LogEntry[]", GS_RT_REF_ARRAY, 0, NULL, 0, 0},
  {GS_DEMO_LEAK_TYPE, GS_RT_INSTANCE, sizeof(page_body), REFS(page_refs), 0},
  {HANDLER, GS_RT_INSTANCE, sizeof(handler_body), REFS(handler_refs), 0},
  {"System.Collections.Generic.List`1[[" HANDLER ", mscorlib]]", GS_RT_INSTANCE,
   sizeof(list_body), REFS(list_refs), 0},
  {HANDLER "[]", GS_RT_REF_ARRAY, 0, NULL, 0, 0},
  {"Contoso.Net.SyncClient", GS_RT_INSTANCE, sizeof(sync_body), REFS(sync_refs), 0},
};

#define CACHE_SLOTS 16
#define LOG_SLOTS   256
#define PHOTO_SIDE  160   /* 160 x 160 x 4 bytes: a large object */
#define THUMB_SIDE  32
#define SYNC_BYTES  4096

static const char *const first_names[] = {
  "Ana", "Bo", "Chen", "Dana", "Eli", "Farah", "Gus", "Hana", "Ivan", "Jo", "Kai", "Lena",
  "Mo", "Nia", "Omar", "Pia"};
static const char *const last_names[] = {
  "Adams", "Berg", "Costa", "Diaz", "Evans", "Fischer", "Garcia", "Hall", "Ito", "Jensen",
  "Khan", "Lopez", "Meyer", "Novak", "Olsen", "Park"};
static const char *const cities[] = {"Redmond", "Seattle", "Bellevue", "Kirkland", "Tacoma"};
static const char *const streets[] = {"Main St", "Pine St", "Lake Ave", "1st Ave", "Oak Rd"};

struct gs_demo {
  gs_rt *rt;
  uint32_t t[T_COUNT];
  uint64_t rng;
  uint64_t steps;
  int64_t next_id;
  gs_rt_obj *s_app, *s_log, *s_empty;   /* statics */
  gs_rt_obj *l_page, *l_cursor;         /* locals of the main loop */
  gs_rt_handle h_store, h_buffer, h_recent;
};

/* ---- helpers ---- */

static uint64_t rnd(gs_demo *d) {
  uint64_t z = (d->rng += UINT64_C(0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

static uint32_t below(gs_demo *d, uint32_t n) { return (uint32_t)(rnd(d) % n); }

/* Registers NULL-terminated slots as locals, cleared first. */
static int locals(gs_rt *rt, ...) {
  va_list ap;
  gs_rt_obj **slot;
  int err = GS_OK;
  va_start(ap, rt);
  while (!err && (slot = va_arg(ap, gs_rt_obj **))) {
    *slot = NULL;
    err = gs_rt_local(rt, slot, 0);
  }
  va_end(ap);
  return err;
}

static gs_rt_obj *text(gs_demo *d, const char *fmt, ...) {
  char buf[128];
  va_list ap;
  int n;
  va_start(ap, fmt);
  n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) return NULL;
  return gs_rt_new_string(d->rt, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

static gs_rt_obj *intern(gs_demo *d, const char *s) { return gs_rt_intern(d->rt, s, strlen(s)); }

static gs_rt_obj *store_of(gs_demo *d) { return BODY(d->s_app, app_body)->store; }

static size_t contacts_count(gs_demo *d) {
  return (size_t)BODY(BODY(store_of(d), store_body)->contacts, list_body)->count;
}

/* List<T>.Add: doubles the backing array when full. */
static int list_add(gs_demo *d, gs_rt_obj **list, gs_rt_obj **item, uint32_t array_type) {
  gs_rt *rt = d->rt;
  size_t top = gs_rt_frame(rt), i, count = (size_t)BODY(*list, list_body)->count;
  gs_rt_obj *bigger;
  int err = GS_OK;
  gs_rt_obj *items = BODY(*list, list_body)->items;
  if (!items || count == gs_rt_length(items)) {
    if ((err = locals(rt, &bigger, (gs_rt_obj **)NULL))) goto out;
    if (!(bigger = gs_rt_new_array(rt, array_type, count ? count * 2 : 4))) {
      err = GS_ENOMEM;
      goto out;
    }
    items = BODY(*list, list_body)->items;
    for (i = 0; i < count; i++) gs_rt_set_elem(rt, bigger, i, gs_rt_elem(items, i));
    gs_rt_write(rt, *list, &BODY(*list, list_body)->items, bigger);
  }
  gs_rt_set_elem(rt, BODY(*list, list_body)->items, count, *item);
  BODY(*list, list_body)->count++;
  BODY(*list, list_body)->version++;
out:
  gs_rt_unwind(rt, top);
  return err;
}

static void list_remove_at(gs_demo *d, gs_rt_obj *list, size_t i) {
  list_body *l = BODY(list, list_body);
  size_t last = (size_t)l->count - 1;
  gs_rt_set_elem(d->rt, l->items, i, gs_rt_elem(l->items, last));
  gs_rt_set_elem(d->rt, l->items, last, NULL);
  l->count--;
  l->version++;
}

/* ---- the application's objects ---- */

static int new_bitmap(gs_demo *d, int side, int bpp, gs_rt_obj **out) {
  gs_rt *rt = d->rt;
  size_t top = gs_rt_frame(rt);
  gs_rt_obj *px;
  int err;
  if ((err = locals(rt, &px, (gs_rt_obj **)NULL))) goto out;
  err = GS_ENOMEM;
  if (!(*out = gs_rt_new_object(rt, d->t[T_BITMAP]))) goto out;
  if (!(px = gs_rt_new_array(rt, GS_RT_T_BYTES, (size_t)side * (size_t)side * (size_t)bpp)))
    goto out;
  gs_rt_write(rt, *out, &BODY(*out, bitmap_body)->pixels, px);
  BODY(*out, bitmap_body)->width = side;
  BODY(*out, bitmap_body)->height = side;
  BODY(*out, bitmap_body)->native = (int64_t)(rnd(d) >> 16);
  err = GS_OK;
out:
  gs_rt_unwind(rt, top);
  return err;
}

static int new_address(gs_demo *d, gs_rt_obj **out) {
  gs_rt *rt = d->rt;
  size_t top = gs_rt_frame(rt);
  gs_rt_obj *s;
  int err;
  if ((err = locals(rt, &s, (gs_rt_obj **)NULL))) goto out;
  err = GS_ENOMEM;
  if (!(*out = gs_rt_new_object(rt, d->t[T_ADDRESS]))) goto out;
  if (!(s = intern(d, below(d, 3) ? "Home" : "Work"))) goto out;
  gs_rt_write(rt, *out, &BODY(*out, address_body)->label, s);
  if (!(s = text(d, "%u %s", 1 + below(d, 9999), streets[below(d, 5)]))) goto out;
  gs_rt_write(rt, *out, &BODY(*out, address_body)->street, s);
  if (!(s = text(d, "%s", cities[below(d, 5)]))) goto out;
  gs_rt_write(rt, *out, &BODY(*out, address_body)->city, s);
  BODY(*out, address_body)->zip = (int32_t)(98000 + below(d, 999));
  err = GS_OK;
out:
  gs_rt_unwind(rt, top);
  return err;
}

static int new_contact(gs_demo *d, gs_rt_obj **out) {
  gs_rt *rt = d->rt;
  size_t top = gs_rt_frame(rt);
  const char *first = first_names[below(d, 16)], *last = last_names[below(d, 16)];
  gs_rt_obj *s;
  int err;
  if ((err = locals(rt, &s, (gs_rt_obj **)NULL))) goto out;
  err = GS_ENOMEM;
  if (!(*out = gs_rt_new_object(rt, d->t[T_CONTACT]))) goto out;
  BODY(*out, contact_body)->id = d->next_id++;
  if (!(s = text(d, "%s", first))) goto out;
  gs_rt_write(rt, *out, &BODY(*out, contact_body)->first, s);
  if (!(s = text(d, "%s", last))) goto out;
  gs_rt_write(rt, *out, &BODY(*out, contact_body)->last, s);
  if (!(s = text(d, "+1 425 555 %04u", below(d, 10000)))) goto out;
  gs_rt_write(rt, *out, &BODY(*out, contact_body)->phone, s);
  if (!(s = text(d, "%s.%s@contoso.com", first, last))) goto out;
  gs_rt_write(rt, *out, &BODY(*out, contact_body)->email, s);
  if ((err = new_address(d, &s))) goto out;
  gs_rt_write(rt, *out, &BODY(*out, contact_body)->address, s);
  if (below(d, 64) == 0) {
    if ((err = new_bitmap(d, THUMB_SIDE, 2, &s))) goto out;
    gs_rt_write(rt, *out, &BODY(*out, contact_body)->photo, s);
  }
  err = GS_OK;
out:
  gs_rt_unwind(rt, top);
  return err;
}

static int add_contact(gs_demo *d) {
  gs_rt *rt = d->rt;
  size_t top = gs_rt_frame(rt);
  gs_rt_obj *c, *list;
  int err;
  if ((err = locals(rt, &c, &list, (gs_rt_obj **)NULL)) || (err = new_contact(d, &c))) goto out;
  list = BODY(store_of(d), store_body)->contacts;
  err = list_add(d, &list, &c, d->t[T_CONTACT_ARRAY]);
out:
  gs_rt_unwind(rt, top);
  return err;
}

static int log_event(gs_demo *d, const char *source, const char *fmt, long long arg) {
  gs_rt *rt = d->rt;
  size_t top = gs_rt_frame(rt);
  gs_rt_obj *e, *s;
  log_body *lb;
  int err;
  if ((err = locals(rt, &e, &s, (gs_rt_obj **)NULL))) goto out;
  err = GS_ENOMEM;
  if (!(e = gs_rt_new_object(rt, d->t[T_ENTRY]))) goto out;
  if (!(s = text(d, fmt, arg))) goto out;
  gs_rt_write(rt, e, &BODY(e, entry_body)->message, s);
  if (!(s = intern(d, source))) goto out;
  gs_rt_write(rt, e, &BODY(e, entry_body)->source, s);
  BODY(e, entry_body)->ticks = (int64_t)d->steps * 16;
  BODY(e, entry_body)->level = (int32_t)below(d, 4);
  lb = BODY(d->s_log, log_body);
  gs_rt_set_elem(rt, lb->entries, (size_t)lb->next, e);
  lb->next = (lb->next + 1) % LOG_SLOTS;
  err = GS_OK;
out:
  gs_rt_unwind(rt, top);
  return err;
}

/* ---- start-up ---- */

/* A new, empty list in the field at offset of *owner. */
static int new_list(gs_demo *d, uint32_t type, gs_rt_obj **owner, size_t offset) {
  gs_rt_obj *l = gs_rt_new_object(d->rt, type);
  if (!l) return GS_ENOMEM;
  gs_rt_write(d->rt, *owner, (gs_rt_obj **)((char *)gs_rt_body(*owner) + offset), l);
  return GS_OK;
}

static int build_app(gs_demo *d) {
  gs_rt *rt = d->rt;
  size_t top = gs_rt_frame(rt);
  gs_rt_obj *o, *a;
  int err;
  if ((err = locals(rt, &o, &a, (gs_rt_obj **)NULL))) goto out;
  err = GS_ENOMEM;
  if (!(d->s_app = gs_rt_new_object(rt, d->t[T_APP]))) goto out;
  if (!(d->s_empty = gs_rt_new_string(rt, "", 0))) goto out;

  if (!(o = gs_rt_new_object(rt, d->t[T_STORE]))) goto out;
  gs_rt_write(rt, d->s_app, &BODY(d->s_app, app_body)->store, o);
  if ((err = new_list(d, d->t[T_CONTACT_LIST], &o, offsetof(store_body, contacts))) ||
      (err = new_list(d, d->t[T_HANDLER_LIST], &o, offsetof(store_body, changed))) ||
      (err = gs_rt_handle_new(rt, o, GS_RT_STRONG, &d->h_store)))
    goto out;
  err = GS_ENOMEM;

  if (!(o = gs_rt_new_object(rt, d->t[T_CACHE]))) goto out;
  gs_rt_write(rt, d->s_app, &BODY(d->s_app, app_body)->images, o);
  if (!(a = gs_rt_new_array(rt, d->t[T_BITMAP_ARRAY], CACHE_SLOTS))) goto out;
  gs_rt_write(rt, o, &BODY(o, cache_body)->bitmaps, a);
  if (!(a = gs_rt_new_array(rt, d->t[T_INT32_ARRAY], CACHE_SLOTS))) goto out;
  gs_rt_write(rt, o, &BODY(o, cache_body)->keys, a);

  if (!(d->s_log = gs_rt_new_object(rt, d->t[T_LOG]))) goto out;
  gs_rt_write(rt, d->s_app, &BODY(d->s_app, app_body)->log, d->s_log);
  if (!(a = gs_rt_new_array(rt, d->t[T_ENTRY_ARRAY], LOG_SLOTS))) goto out;
  gs_rt_write(rt, d->s_log, &BODY(d->s_log, log_body)->entries, a);

  /* The network buffer is pinned for the native receive and parsed in
   * place: an interior pointer in a local. */
  if (!(o = gs_rt_new_object(rt, d->t[T_SYNC]))) goto out;
  gs_rt_write(rt, d->s_app, &BODY(d->s_app, app_body)->sync, o);
  if (!(a = gs_rt_new_array(rt, GS_RT_T_BYTES, SYNC_BYTES))) goto out;
  gs_rt_write(rt, o, &BODY(o, sync_body)->buffer, a);
  if ((err = gs_rt_handle_new(rt, a, GS_RT_PINNING, &d->h_buffer)) ||
      (err = gs_rt_handle_new(rt, NULL, GS_RT_WEAK, &d->h_recent)))
    goto out;
  d->l_cursor = a;
  err = GS_OK;
out:
  gs_rt_unwind(rt, top);
  return err;
}

static int register_all(gs_demo *d) {
  int i, err;
  for (i = 0; i < T_COUNT; i++)
    if ((err = gs_rt_type_new(d->rt, &demo_types[i], &d->t[i]))) return err;
  if ((err = gs_rt_static(d->rt, &d->s_app, d->t[T_PROGRAM])) ||
      (err = gs_rt_static(d->rt, &d->s_log, d->t[T_LOG])) ||
      (err = gs_rt_static(d->rt, &d->s_empty, GS_RT_T_STRING)) ||
      (err = gs_rt_local(d->rt, &d->l_page, 0)) ||
      (err = gs_rt_local(d->rt, &d->l_cursor, GS_RT_INTERIOR)))
    return err;
  return GS_OK;
}

size_t gs_demo_arena_for(uint64_t objects) {
  return ((size_t)48 << 20) + (size_t)objects * 80u;
}

int gs_demo_new(gs_demo **out, const gs_demo_options *opt) {
  gs_rt_config c;
  gs_rt_stats st;
  gs_demo *d;
  uint64_t objects = opt && opt->objects ? opt->objects : 10000;
  int err;
  *out = NULL;
  if (objects > GS_DEMO_MAX_OBJECTS ||
      (sizeof(size_t) < 8 && objects > (uint64_t)(SIZE_MAX / 128)))
    return GS_EINVAL;
  if (!(d = calloc(1, sizeof *d))) return GS_ENOMEM;
  memset(&c, 0, sizeof c);
  c.arena_bytes = opt && opt->arena_bytes ? opt->arena_bytes : gs_demo_arena_for(objects);
  c.domain = GS_DEMO_APP_NAME;
  d->rng = opt ? opt->seed : 0;
  d->next_id = 1000;
  if ((err = gs_rt_new(&d->rt, &c)) || (err = register_all(d)) || (err = build_app(d)))
    goto fail;
  for (;;) {   /* a few contacts at least, for the session to browse */
    gs_rt_get_stats(d->rt, &st);
    if (st.allocated_objects >= objects && contacts_count(d) >= 32) break;
    if ((err = add_contact(d))) goto fail;
  }
  *out = d;
  return GS_OK;
fail:
  gs_demo_free(d);
  return err;
}

void gs_demo_free(gs_demo *d) {
  if (!d) return;
  gs_rt_free(d->rt);
  free(d);
}

/* ---- one step of a user session ---- */

/* Mostly the recently used contacts, sometimes any. */
static gs_rt_obj *pick_contact(gs_demo *d, size_t *index) {
  gs_rt_obj *list = BODY(store_of(d), store_body)->contacts;
  size_t n = (size_t)BODY(list, list_body)->count;
  size_t i = below(d, 4) ? below(d, n < 24 ? (uint32_t)n : 24) : (size_t)(rnd(d) % n);
  *index = i;
  return gs_rt_elem(BODY(list, list_body)->items, i);
}

/* The photo from the cache, or loaded into it; an evicted bitmap should be
 * disposed, but one in four is left to its finalizer. The page shows it
 * through the cache and keeps only the contact's thumbnail. */
static int load_photo(gs_demo *d, int32_t key, gs_rt_obj **out) {
  gs_rt *rt = d->rt;
  gs_rt_obj *cache = BODY(d->s_app, app_body)->images, *old;
  cache_body *cb = BODY(cache, cache_body);
  int32_t *keys = gs_rt_body(cb->keys);
  int i, err;
  for (i = 0; i < CACHE_SLOTS; i++) {
    if (keys[i] == key && (*out = gs_rt_elem(cb->bitmaps, (size_t)i))) {
      cb->hits++;
      return GS_OK;
    }
  }
  if ((err = new_bitmap(d, PHOTO_SIDE, 4, out))) return err;
  cache = BODY(d->s_app, app_body)->images;
  cb = BODY(cache, cache_body);
  i = cb->next;
  cb->next = (cb->next + 1) % CACHE_SLOTS;
  cb->misses++;
  if ((old = gs_rt_elem(cb->bitmaps, (size_t)i)) && below(d, 4))
    gs_rt_suppress_finalize(rt, old);
  gs_rt_set_elem(rt, cb->bitmaps, (size_t)i, *out);
  ((int32_t *)gs_rt_body(cb->keys))[i] = key;
  return GS_OK;
}

/* Opens a contact's page. The page subscribes to the store's Changed event
 * and is closed without unsubscribing: the handler keeps it alive. */
static int open_page(gs_demo *d) {
  gs_rt *rt = d->rt;
  size_t top = gs_rt_frame(rt), index;
  gs_rt_obj *c, *page, *o, *list;
  int err;
  if ((err = locals(rt, &c, &page, &o, &list, (gs_rt_obj **)NULL))) goto out;
  c = pick_contact(d, &index);
  err = GS_ENOMEM;
  if (!(page = gs_rt_new_object(rt, d->t[T_PAGE]))) goto out;
  gs_rt_write(rt, page, &BODY(page, page_body)->contact, c);
  if (!(o = text(d, "Contact #%lld", (long long)BODY(c, contact_body)->id))) goto out;
  gs_rt_write(rt, page, &BODY(page, page_body)->title, o);
  if ((err = load_photo(d, (int32_t)BODY(c, contact_body)->id, &o))) goto out;
  gs_rt_write(rt, page, &BODY(page, page_body)->photo, BODY(c, contact_body)->photo);
  gs_rt_handle_set(rt, d->h_recent, c);   /* for Back: the contact may be deleted */
  err = GS_ENOMEM;
  if (!(o = gs_rt_new_object(rt, d->t[T_HANDLER]))) goto out;
  gs_rt_write(rt, o, &BODY(o, handler_body)->target, page);
  BODY(o, handler_body)->method = 0x4a10;
  gs_rt_write(rt, page, &BODY(page, page_body)->handler, o);
  list = BODY(store_of(d), store_body)->changed;
  if ((err = list_add(d, &list, &o, d->t[T_HANDLER_ARRAY]))) goto out;
  d->l_page = page;
  err = log_event(d, "ContactsPage", "Opened contact %lld", (long long)index);
out:
  gs_rt_unwind(rt, top);
  return err;
}

/* Rows formatted for the list view and dropped at once. */
static int render_rows(gs_demo *d) {
  int i;
  for (i = 0; i < 8; i++)
    if (!text(d, "row %d of page %llu", i, (unsigned long long)d->steps)) return GS_ENOMEM;
  return GS_OK;
}

static int edit_contact(gs_demo *d) {
  gs_rt *rt = d->rt;
  size_t top = gs_rt_frame(rt), index;
  gs_rt_obj *c, *s;
  int err;
  if ((err = locals(rt, &c, &s, (gs_rt_obj **)NULL))) goto out;
  c = pick_contact(d, &index);
  err = GS_ENOMEM;
  if (!(s = text(d, "+1 206 555 %04u", below(d, 10000)))) goto out;
  gs_rt_write(rt, c, &BODY(c, contact_body)->phone, s);
  BODY(store_of(d), store_body)->version++;
  err = GS_OK;
out:
  gs_rt_unwind(rt, top);
  return err;
}

static int sync_receive(gs_demo *d) {
  uint8_t *p = gs_rt_body(d->l_cursor);
  size_t i, n = 64 + below(d, SYNC_BYTES - 64);
  for (i = 0; i < n; i++) p[i] = (uint8_t)rnd(d);
  BODY(BODY(d->s_app, app_body)->sync, sync_body)->received += (int32_t)n;
  return log_event(d, "Sync", "Received %lld bytes", (long long)n);
}

static void run_finalizers(gs_demo *d) {
  gs_rt_obj *o;
  while ((o = gs_rt_next_finalizable(d->rt)))
    if (gs_rt_type_of(o) == d->t[T_BITMAP]) BODY(o, bitmap_body)->native = 0;  /* frees the native bits */
}

static int step(gs_demo *d) {
  uint64_t s = ++d->steps;
  gs_rt_obj *list;
  size_t n;
  int err;
  if ((err = open_page(d)) || (err = render_rows(d))) return err;
  if (s % 8 == 0 && (err = edit_contact(d))) return err;
  if (s % 4 == 0 && (err = sync_receive(d))) return err;
  if (s % 16 == 0 && (err = add_contact(d))) return err;
  if (s % 32 == 0) {
    list = BODY(store_of(d), store_body)->contacts;
    n = (size_t)BODY(list, list_body)->count;
    if (n > 24) list_remove_at(d, list, 24 + (size_t)(rnd(d) % (n - 24)));
  }
  if (s % 10 == 0) run_finalizers(d);
  return GS_OK;
}

int gs_demo_step(gs_demo *d, uint64_t n) {
  int err;
  while (n--)
    if ((err = step(d))) return err;
  return GS_OK;
}

gs_rt *gs_demo_runtime(gs_demo *d) { return d->rt; }
uint64_t gs_demo_steps_done(const gs_demo *d) { return d->steps; }
uint32_t gs_demo_leak_type(const gs_demo *d) { return d->t[T_PAGE]; }
