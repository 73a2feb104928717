/* gs_refs.c - sets of referenced object IDs (see gs_refs.h).
 *
 * Each of the reader's workers has a set of its own, so noting needs no
 * atomic operations. A set holds one section at a time: a worker notes a
 * block of another section only once the calling thread has freed the set
 * (it has taken all the records of the section before), and otherwise
 * leaves the block to the calling thread. The section a set holds is the
 * only state both threads touch, under a small lock; the bits are written
 * by the worker before it hands the block over and read by the calling
 * thread after it took the block, which the reader's slots order. */
#include <stdlib.h>
#include "gs_error.h"
#include "gs_refs.h"
#include "gs_thread.h"

#define PREFETCH_AHEAD  32     /* references asked for ahead of their bits */
#define NO_SECTION UINT64_MAX

typedef struct worker_set {
  gs_sem *lock;                /* guards section */
  uint64_t section;            /* section records before the blocks noted, or NO_SECTION */
  int overflow;
  gs_idset set;
} worker_set;

struct gs_refs_ahead {
  worker_set w[GS_READER_WORKERS];
  size_t ready;                /* sets initialised */
};

/* Each ID lands anywhere in the bitmaps and costs little else, so the next
 * ones are asked for well ahead. */
int gs_refs_note(gs_idset *set, int *overflow, const uint64_t *refs, size_t n) {
  size_t i;
  for (i = 0; i < n && !*overflow; i++) {
    int added;
    if (i + PREFETCH_AHEAD < n) gs_idset_prefetch(set, refs[i + PREFETCH_AHEAD]);
    added = gs_idset_put(set, refs[i]);
    if (added == GS_ELIMIT) {
      gs_idset_clear(set);
      *overflow = 1;
    } else if (added < 0) {
      return added;
    }
  }
  return GS_OK;
}

/* On worker `worker`: the block's tag, 1 when noted, 0 when left to the
 * calling thread. */
static int note_block(void *ctx, unsigned worker, uint64_t sections, const uint64_t *refs, size_t n) {
  worker_set *w = &((gs_refs_ahead *)ctx)->w[worker];
  int mine;
  gs_sem_wait(w->lock);
  if ((mine = w->section == NO_SECTION || w->section == sections)) w->section = sections;
  gs_sem_post(w->lock);
  return mine && gs_refs_note(&w->set, &w->overflow, refs, n) == GS_OK;
}

static void ahead_free(gs_refs_ahead *a) {
  size_t i;
  for (i = 0; i < a->ready; i++) {
    gs_sem_free(a->w[i].lock);
    gs_idset_free(&a->w[i].set);
  }
  free(a);
}

gs_refs_ahead *gs_refs_ahead_start(gs_reader *r, size_t free_chunks) {
  gs_refs_ahead *a = calloc(1, sizeof *a);
  if (!a) return NULL;
  for (; a->ready < GS_READER_WORKERS; a->ready++) {
    worker_set *w = &a->w[a->ready];
    w->section = NO_SECTION;
    if (gs_idset_init(&w->set)) break;
    if (gs_sem_new(&w->lock, 1)) { gs_idset_free(&w->set); break; }
    gs_idset_bitmaps_only(&w->set, free_chunks);
  }
  if (a->ready < GS_READER_WORKERS || gs_reader_on_refs(r, note_block, a)) {
    ahead_free(a);
    return NULL;
  }
  return a;
}

void gs_refs_ahead_stop(gs_refs_ahead *a, gs_reader *r) {
  if (!a) return;
  gs_reader_on_refs(r, NULL, NULL);
  ahead_free(a);
}

void gs_refs_ahead_release(gs_refs_ahead *a, uint64_t before) {
  size_t i;
  for (i = 0; a && i < GS_READER_WORKERS; i++) {
    worker_set *w = &a->w[i];
    gs_sem_wait(w->lock);
    if (w->section < before) {
      gs_idset_clear(&w->set);
      w->overflow = 0;
      w->section = NO_SECTION;
    }
    gs_sem_post(w->lock);
  }
}

int gs_refs_ahead_gather(gs_refs_ahead *a, uint64_t section, gs_idset *into, int *overflow) {
  size_t i;
  for (i = 0; a && i < GS_READER_WORKERS; i++) {
    worker_set *w = &a->w[i];
    int mine, err = GS_OK;
    gs_sem_wait(w->lock);
    mine = w->section == section;
    gs_sem_post(w->lock);
    if (mine && w->overflow) *overflow = 1;
    if (mine && !*overflow) err = gs_idset_merge(into, &w->set);
    if (err == GS_ELIMIT) {
      gs_idset_clear(into);
      *overflow = 1;
    } else if (err) {
      return err;
    }
  }
  gs_refs_ahead_release(a, section + 1);
  return GS_OK;
}

size_t gs_refs_ahead_memory(const gs_refs_ahead *a) {
  size_t i, bytes = 0;
  for (i = 0; a && i < GS_READER_WORKERS; i++) bytes += gs_idset_memory(&a->w[i].set);
  return bytes;
}
