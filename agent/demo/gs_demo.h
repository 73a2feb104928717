/* gs_demo.h - a contacts application running on the gs_rt heap.
 *
 * The program keeps a contact store, an image cache of large bitmaps, an
 * event log ring and a pinned network buffer, and every step does what a
 * user session does: open a contact page, load its photo, log, edit, add
 * and remove contacts, run pending finalizers. It has a deliberate slow
 * leak: every page it opens subscribes an event handler to the store's
 * Changed event and never unsubscribes, so ContactDetailsPage and its
 * handler grow by one instance per step in every snapshot. */
#ifndef GS_DEMO_H
#define GS_DEMO_H

#include <stddef.h>
#include <stdint.h>
#include "gs_rt.h"

typedef struct gs_demo gs_demo;

typedef struct gs_demo_options {
  uint64_t objects;      /* live objects after the prefill, about; 0: 10,000 */
  uint64_t seed;         /* same seed, same program run */
  size_t arena_bytes;    /* 0: sized from objects */
} gs_demo_options;

#define GS_DEMO_APP_NAME "Contacts.exe"
#define GS_DEMO_LEAK_TYPE "Contoso.Contacts.UI.ContactDetailsPage"
#define GS_DEMO_MAX_OBJECTS ((uint64_t)100000000)

/* Creates the runtime and the application and prefills the heap. Returns
 * GS_EINVAL for options out of range, GS_ENOMEM when memory runs out. */
int gs_demo_new(gs_demo **d, const gs_demo_options *opt);
/* Runs n steps. GS_ENOMEM when the heap is exhausted. */
int gs_demo_step(gs_demo *d, uint64_t n);
void gs_demo_free(gs_demo *d);

gs_rt *gs_demo_runtime(gs_demo *d);
uint64_t gs_demo_steps_done(const gs_demo *d);
/* Type ID of GS_DEMO_LEAK_TYPE. */
uint32_t gs_demo_leak_type(const gs_demo *d);
/* The arena size gs_demo_new picks for this many objects. */
size_t gs_demo_arena_for(uint64_t objects);

#endif
