/* rt_snap.h - a capture of a gs_rt heap held in memory, for assertions.
 *
 * Small heaps only: the tests look objects up by ID (sorted, binary search). */
#ifndef RT_SNAP_H
#define RT_SNAP_H

#include <stddef.h>
#include <stdint.h>
#include "gs_rt.h"

typedef struct rt_snap_obj {
  uint64_t id;
  uint32_t type;
  uint64_t size;
  size_t first, nrefs;     /* into rt_snap.refs */
} rt_snap_obj;

typedef struct rt_snap_root {
  uint64_t id;
  unsigned kind, flags;
  uint32_t container;
} rt_snap_root;

typedef struct rt_snap_gen {
  unsigned gen;
  uint64_t start, used, reserved;
} rt_snap_gen;

typedef struct rt_snap {
  rt_snap_obj *objs;
  size_t nobjs, cobjs;
  uint64_t *refs;
  size_t nrefs, crefs;
  rt_snap_root *roots;
  size_t nroots, croots;
  rt_snap_gen gens[8];
  size_t ngens;
  uint32_t ntypes;
} rt_snap;

/* Captures rt (a full collection first) into s; fails the test on error. */
void rt_snap_take(gs_rt *rt, unsigned flags, rt_snap *s);
void rt_snap_free(rt_snap *s);
const rt_snap_obj *rt_snap_find(const rt_snap *s, uint64_t id);
size_t rt_snap_count_type(const rt_snap *s, uint32_t type);
/* Number of roots naming id with this kind (and these flags, unless flags < 0). */
size_t rt_snap_roots_of(const rt_snap *s, uint64_t id, unsigned kind, int flags);
/* Fails the test unless every reference and root names an object of s,
 * every object's type is defined, IDs are unique. */
void rt_snap_check(const rt_snap *s);

#endif
