/* gs_source.h - heap sources: anything the walker can turn into a snapshot.
 *
 * A source describes one consistent heap by calling the visitor it is given:
 * sections in order, and inside a section its types, objects, roots and
 * generation ranges in any order (a type may follow the objects that use it).
 * Every visitor call returns GS_OK or an error; a source stops at the first
 * error and returns it, and describes a failure of its own in src->error.
 * Memory the visitor is handed (names, reference arrays) is only valid during
 * the call: the walker streams, it keeps nothing. */
#ifndef GS_SOURCE_H
#define GS_SOURCE_H

#include <stddef.h>
#include <stdint.h>

typedef struct gs_heap_visitor {
  void *ctx;
  int (*section)(void *ctx, const char *name, size_t name_len);
  int (*type)(void *ctx, uint64_t id, const char *name, size_t name_len);
  int (*object)(void *ctx, uint64_t id, uint64_t type, uint64_t size,
                const uint64_t *refs, size_t nrefs);
  /* container is meaningful only for static roots (kind 4). */
  int (*root)(void *ctx, uint64_t id, unsigned kind, unsigned flags, uint64_t container);
  /* Generation 0, 1, 2, or 3 for the large object heap. */
  int (*generation)(void *ctx, unsigned generation, uint64_t start, uint64_t used,
                    uint64_t reserved);
  int (*section_end)(void *ctx);
  /* Optional, for sources that know when their heap was captured (a replayed
   * dump): the next section or section_end record carries ms instead of the
   * walker's clock. */
  int (*timestamp)(void *ctx, uint64_t ms);
  /* Optional (NULL in a visitor that keeps none): the name of the static
   * field through which the static root of object was found; the record
   * format has no place for it. */
  int (*static_name)(void *ctx, uint64_t object, const char *name, size_t name_len);
  /* An object in parts, for a source that meets its references a batch at
   * a time (so that none holds an array's references whole): begin, refs
   * as often as needed, end, nothing else in between. The walker's visitor
   * has them; a visitor of another kind may leave them NULL. */
  int (*object_begin)(void *ctx, uint64_t id, uint64_t type, uint64_t size);
  int (*object_refs)(void *ctx, const uint64_t *refs, size_t nrefs);
  int (*object_end)(void *ctx);
} gs_heap_visitor;

typedef struct gs_source gs_source;

typedef struct gs_source_ops {
  const char *name;                                   /* "mock", "demo", "file" */
  int (*walk)(gs_source *src, const gs_heap_visitor *v);
  void (*free)(gs_source *src);
  /* Optional (NULL: the size is never known): the heap's size in bytes
   * now, read cheaply without a walk and without stopping the program (a
   * runtime's own statistics: objects allocated, garbage not yet collected
   * included). The agent's capture triggers poll it, so it must cost
   * microseconds. GS_OK with *bytes, or an error when it cannot tell. */
  int (*heap_bytes)(gs_source *src, uint64_t *bytes);
  /* Optional (NULL: the heap changes on its own or not at all): lets the
   * program behind the source run on for one period between two heap size
   * checks, for a program that runs only when the agent lets it (the demo
   * runs its "every" steps). A walk after a run does not run it again. */
  int (*run)(gs_source *src);
  /* Optional (NULL: never): whether the program behind the source is gone
   * for good (it exited), so that a session with the collector ends rather
   * than fail every capture after. */
  int (*gone)(gs_source *src);
  /* Optional: fills src->program, asked once before a session's hello
   * (a one-shot capture needs no name but its section's). */
  void (*describe)(gs_source *src);
} gs_source_ops;

/* Every source starts with this header; backends extend it. */
struct gs_source {
  const gs_source_ops *ops;
  int stable_ids;       /* object IDs stay the same for the same object across walks */
  /* Set by the walker before each walk: 1 when stable IDs are asked for (only
   * when stable_ids is set). A source that has both kinds of ID reads it: the
   * demo gives addresses by default and its runtime's stable IDs when set. */
  int use_stable_ids;
  /* Set by the walker before each walk: the most references one object may
   * have. A source that holds an object's references stops there. */
  size_t max_refs;
  uint64_t pause_us;    /* set by walk: how long the program was stopped; 0 if none */
  /* Set by walk, for sources that read the runtime's events (dotnet): the
   * bytes of the event stream and the events the runtime dropped. */
  uint64_t stream_bytes, lost_events;
  /* Set by describe where the source knows it: the program and its runtime
   * ("Contacts (.NET 10.0.12)"), the application's name in a session's
   * hello unless --app names one; empty otherwise. */
  char program[400];
  char error[256];      /* set by walk when it fails for a reason of its own */
};

#endif
