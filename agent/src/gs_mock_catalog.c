/* gs_mock_catalog.c - the type catalogue of the mock heap.
 *
 * Popularity is Zipf over ranks; pools (all types, types that can head a
 * group, types that can be large) keep cumulative weights with a guide
 * table, so a draw is a short binary search. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gs_mock_catalog.h"

#define LATE_ONE_IN 20u        /* share of types written after first use */

/* The most common types of a real heap, most popular first. */
static const struct core_type {
  const char *name;
  gs_mock_shape shape;
  uint8_t fields;
  uint16_t elem_or_size;
} core_types[] = {
  {"System.String", GS_MOCK_STRING, 0, 2},
  {"System.Object[] (Ptrs,ElemSize=8)", GS_MOCK_REFS, 0, 8},
  {"System.Char[] (NoPtrs,ElemSize=2)", GS_MOCK_VALUES, 0, 2},
  {"System.Byte[] (NoPtrs,ElemSize=1)", GS_MOCK_VALUES, 0, 1},
  {"System.Collections.Generic.Dictionary`2[[System.String, mscorlib],"
   "[System.Int32, mscorlib]]", GS_MOCK_CLASS, 6, 0x50},
  {"System.Collections.Generic.Dictionary`2+Entry[[System.String, mscorlib],"
   "[System.Int32, mscorlib]][] (Ptrs,ElemSize=24)", GS_MOCK_REFS, 0, 24},
  {"System.Int32[] (NoPtrs,ElemSize=4)", GS_MOCK_VALUES, 0, 4},
  {"System.RuntimeType", GS_MOCK_CLASS, 2, 0x28},
  {"System.Collections.Generic.List`1[[System.String, mscorlib]]", GS_MOCK_CLASS, 2, 0x20},
  {"System.EventHandler", GS_MOCK_CLASS, 2, 0x40},
  {"System.Collections.Hashtable", GS_MOCK_CLASS, 5, 0x50},
  {"System.Collections.Hashtable+bucket[] (Ptrs,ElemSize=24)", GS_MOCK_REFS, 0, 24},
  {"System.WeakReference", GS_MOCK_CLASS, 0, 0x18},
  {"System.Reflection.RuntimeMethodInfo", GS_MOCK_CLASS, 6, 0x68},
  {"System.Collections.Generic.List`1[[System.Object, mscorlib]]", GS_MOCK_CLASS, 2, 0x20},
  {"System.Text.StringBuilder", GS_MOCK_CLASS, 2, 0x30},
  {"System.Action`1[[System.Object, mscorlib]]", GS_MOCK_CLASS, 2, 0x40},
  {"System.Double[] (NoPtrs,ElemSize=8)", GS_MOCK_VALUES, 0, 8},
  {"System.Collections.ArrayList", GS_MOCK_CLASS, 2, 0x28},
  {"System.Threading.Tasks.Task", GS_MOCK_CLASS, 4, 0x40},
  {"System.Collections.Concurrent.ConcurrentDictionary`2[[System.Int32, mscorlib],"
   "[System.Threading.Tasks.Task, mscorlib]]", GS_MOCK_CLASS, 5, 0x48},
  {"System.Func`2[[System.String, mscorlib],[System.Boolean, mscorlib]]", GS_MOCK_CLASS, 2, 0x40},
  {"System.String[] (Ptrs,ElemSize=8)", GS_MOCK_REFS, 0, 8},
  {"System.Int64[] (NoPtrs,ElemSize=8)", GS_MOCK_VALUES, 0, 8},
  {"System.Windows.DependencyProperty", GS_MOCK_CLASS, 6, 0x58},
  {"System.Windows.EffectiveValueEntry[] (Ptrs,ElemSize=16)", GS_MOCK_REFS, 0, 16},
  {"System.Threading.ExecutionContext", GS_MOCK_CLASS, 3, 0x38},
  {"System.Collections.Generic.KeyValuePair`2[[System.String, mscorlib],"
   "[System.Object, mscorlib]][] (Ptrs,ElemSize=16)", GS_MOCK_REFS, 0, 16},
  {"System.Globalization.CultureInfo", GS_MOCK_CLASS, 8, 0x90},
  {"System.Threading.TimerQueueTimer", GS_MOCK_CLASS, 5, 0x58},
  {"System.Threading.Timer", GS_MOCK_CLASS, 1, 0x20},
  {"System.Guid", GS_MOCK_CLASS, 0, 0x20},
  {"System.Int32", GS_MOCK_CLASS, 0, 0x18},
  {"System.Boolean[] (NoPtrs,ElemSize=1)", GS_MOCK_VALUES, 0, 1},
  {"System.Reflection.RuntimeAssembly", GS_MOCK_CLASS, 3, 0x30},
  {"System.Collections.Generic.HashSet`1[[System.String, mscorlib]]", GS_MOCK_CLASS, 4, 0x40},
  {"System.Byte[] (Bytes > 10K,NoPtrs,ElemSize=1)", GS_MOCK_VALUES, 0, 1},
  {"<CppImplementationDetails>.$ArrayType$$$BY0A@E", GS_MOCK_VALUES, 0, 1},
  {"System.Xml.XmlElement", GS_MOCK_CLASS, 7, 0x50},
  {"System.Xml.XmlAttribute", GS_MOCK_CLASS, 4, 0x38},
};
#define NCORE (sizeof core_types / sizeof core_types[0])

/* Generated names: namespace x adjective x noun gives 24 576 distinct bases. */
static const char *const namespaces[][2] = {
  {"Contoso.Inventory", "Contoso.Inventory"},
  {"Contoso.Inventory.Data", "Contoso.Inventory"},
  {"Contoso.Inventory.UI.Views", "Contoso.Inventory.UI"},
  {"Contoso.Shared.Caching", "Contoso.Shared"},
  {"Fabrikam.Scheduling", "Fabrikam.Core"},
  {"Fabrikam.Scheduling.Rules", "Fabrikam.Core"},
  {"Fabrikam.Devices.Bluetooth", "Fabrikam.Devices"},
  {"Northwind.Orders", "Northwind.Orders"},
  {"Northwind.Orders.Services", "Northwind.Orders"},
  {"Northwind.Billing.Model", "Northwind.Billing"},
  {"AdventureWorks.Sync.Protocol", "AdventureWorks.Sync"},
  {"AdventureWorks.Sync.Storage", "AdventureWorks.Sync"},
  {"Tailspin.Telemetry", "Tailspin.Telemetry"},
  {"Tailspin.Telemetry.Export", "Tailspin.Telemetry"},
  {"System.Windows.Controls", "PresentationFramework"},
  {"System.Windows.Media.Animation", "PresentationCore"},
  {"MS.Internal.Text", "PresentationFramework"},
  {"System.Xml.Linq", "System.Xml.Linq"},
  {"System.Net.Http.Headers", "System.Net.Http"},
  {"System.Data.Common", "System.Data"},
  {"Microsoft.Xna.Framework.Graphics", "Microsoft.Xna.Framework"},
  {"Microsoft.Xna.Framework.Content", "Microsoft.Xna.Framework"},
  {"Newtonsoft.Json.Serialization", "Newtonsoft.Json"},
  {"OpenNETCF.IO.Serial", "OpenNETCF"},
};
static const char *const adjectives[] = {
  "Cached", "Pooled", "Shared", "Pending", "Deferred", "Weak", "Composite",
  "Remote", "Local", "Async", "Buffered", "Indexed", "Ordered", "Scoped",
  "Static", "Dynamic", "Virtual", "Primary", "Secondary", "Transient",
  "Persistent", "Sealed", "Observable", "Lazy", "Keyed", "Default", "Nested",
  "Partial", "Immutable", "Concurrent", "Compiled", "Reusable",
};
static const char *const nouns[] = {
  "Order", "Customer", "Session", "Request", "Response", "Token", "Message",
  "Channel", "Segment", "Buffer", "Record", "Entry", "Node", "Handler",
  "Provider", "Factory", "Manager", "Resolver", "Listener", "Visitor",
  "Builder", "Reader", "Writer", "Context", "Binding", "Template", "Resource",
  "Schedule", "Invoice", "Route", "Frame", "Element",
};
static const char *const nested[] = {
  "+Enumerator", "+Node", "+<>c__DisplayClass5", "+Entry", "+<>c", "+State",
};
#define COUNT(a) (sizeof (a) / sizeof (a)[0])

static int names_append(gs_mock_catalog *c, const char *s, size_t len) {
  if (c->names_len + len > c->names_cap) {
    size_t cap = c->names_cap ? c->names_cap * 2 : 65536;
    char *p;
    while (cap < c->names_len + len) cap *= 2;
    p = realloc(c->names, cap);
    if (!p) return GS_ENOMEM;
    c->names = p;
    c->names_cap = cap;
  }
  memcpy(c->names + c->names_len, s, len);
  c->names_len += len;
  return GS_OK;
}

/* Pointer fields of a generated class: mostly few, sometimes many. */
static uint8_t class_fields(uint64_t h) {
  static const uint8_t table[16] = {0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 3, 3, 4, 6};
  return table[h & 15];
}

/* Builds the name and shape of generated type q into t. */
static int generated_type(gs_mock_catalog *c, uint32_t q, uint64_t seed,
                          gs_mock_type *t) {
  const uint32_t nns = COUNT(namespaces), nadj = COUNT(adjectives);
  const uint32_t nnoun = COUNT(nouns), nbases = nns * nadj * nnoun;
  /* 7919 is prime to nbases (2^13 * 3), so this permutes the bases: popular
   * types do not all share one adjective and noun */
  uint32_t b = (uint32_t)(((uint64_t)(q % nbases) * 7919) % nbases);
  uint64_t h = gs_mock_mix(seed ^ (UINT64_C(0x7479706573) + q));
  const char *ns = namespaces[b % nns][0];
  const char *asm_name = namespaces[b % nns][1];
  const char *adj = adjectives[(b / nns) % nadj];
  const char *noun = nouns[(b / nns / nadj) % nnoun];
  uint32_t round = q / nbases;
  unsigned pick = (unsigned)(h % 100);
  char base[160], name[512];
  int len;

  if (round > 0)
    snprintf(base, sizeof base, "%s.%s%s%u", ns, adj, noun, (unsigned)round + 1);
  else
    snprintf(base, sizeof base, "%s.%s%s", ns, adj, noun);
  t->shape = GS_MOCK_CLASS;
  t->fields = class_fields(h >> 8);
  t->size = (uint32_t)(24 + 8 * (uint64_t)t->fields + 8 * ((h >> 12) & 3));
  t->elem = 8;
  if (pick < 50) {
    len = snprintf(name, sizeof name, "%s", base);
  } else if (pick < 58) {
    len = snprintf(name, sizeof name, "%s%s", base, nested[(h >> 16) % COUNT(nested)]);
  } else if (pick < 66) {
    len = snprintf(name, sizeof name,
                   "System.Collections.Generic.List`1[[%s, %s]]", base, asm_name);
    t->fields = 2;
    t->size = 0x20;
  } else if (pick < 71) {
    len = snprintf(name, sizeof name,
                   "System.Collections.Generic.Dictionary`2[[System.String, mscorlib],"
                   "[%s, %s]]", base, asm_name);
    t->fields = 6;
    t->size = 0x50;
  } else if (pick < 76) {
    len = snprintf(name, sizeof name,
                   "System.Func`2[[%s, %s],[System.Boolean, mscorlib]]", base, asm_name);
    t->fields = 2;
    t->size = 0x40;
  } else if (pick < 88) {
    len = snprintf(name, sizeof name, "%s[] (Ptrs,ElemSize=8)", base);
    t->shape = GS_MOCK_REFS;
  } else if (pick < 94) {
    len = snprintf(name, sizeof name,
                   "System.Collections.Generic.Dictionary`2+Entry[[System.String, mscorlib],"
                   "[%s, %s]][] (Ptrs,ElemSize=24)", base, asm_name);
    t->shape = GS_MOCK_REFS;
    t->elem = 24;
  } else {
    t->elem = (uint16_t)(8 * (1 + ((h >> 20) & 3)));
    len = snprintf(name, sizeof name, "%s[] (NoPtrs,ElemSize=%u)", base, (unsigned)t->elem);
    t->shape = GS_MOCK_VALUES;
  }
  if (len < 0 || (size_t)len >= sizeof name) return GS_ELIMIT;
  t->name_off = (uint32_t)c->names_len;
  t->name_len = (uint32_t)len;
  return names_append(c, name, (size_t)len);
}

/* Zipf weight of popularity rank r; the first type (System.String) gets a
 * boost, as strings are the most common objects of nearly every heap. */
static uint64_t weight(uint32_t r) {
  uint64_t w = (UINT64_C(1) << 40) / ((uint64_t)r + 1);
  return r == 0 ? 4 * w : w;
}

static void pool_add(gs_mock_pool *p, uint32_t rank) {
  uint64_t prev = p->n ? p->cdf[p->n - 1] : 0;
  p->ranks[p->n] = rank;
  p->cdf[p->n] = prev + weight(rank);
  p->n++;
}

static int pool_alloc(gs_mock_pool *p, uint32_t n) {
  p->ranks = malloc(sizeof *p->ranks * n);
  p->cdf = malloc(sizeof *p->cdf * n);
  p->n = 0;
  return p->ranks && p->cdf ? GS_OK : GS_ENOMEM;
}

static void pool_index(gs_mock_pool *p) {
  uint64_t total = p->cdf[p->n - 1];
  uint32_t b, i = 0;
  p->shift = 0;
  while ((total >> p->shift) >= (1u << GS_MOCK_GUIDE_BITS)) p->shift++;
  for (b = 0; b <= (1u << GS_MOCK_GUIDE_BITS); b++) {
    while (i < p->n - 1 && p->cdf[i] <= ((uint64_t)b << p->shift)) i++;
    p->guide[b] = i;
  }
}

static void pool_free(gs_mock_pool *p) {
  free(p->ranks);
  free(p->cdf);
}

/* Draws a type of pool p by popularity. */
uint32_t gs_mock_pool_pick(const gs_mock_pool *p, gs_mock_rng *r) {
  uint64_t u = gs_mock_below(r, p->cdf[p->n - 1]);
  uint32_t lo = p->guide[u >> p->shift], hi = p->guide[(u >> p->shift) + 1];
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (p->cdf[mid] > u) hi = mid; else lo = mid + 1;
  }
  return p->ranks[lo];
}

/* Type IDs follow popularity loosely, like IDs handed out in load order:
 * ranks are shuffled within blocks of 16. */
static uint64_t type_id(uint32_t rank, uint64_t seed) {
  uint32_t shuffle = (uint32_t)(gs_mock_mix(seed ^ UINT64_C(0x6964)) & 15);
  return 1 + (uint64_t)((rank & ~15u) | ((rank ^ shuffle) & 15u));
}

int gs_mock_catalog_build(gs_mock_catalog *c, uint32_t ntypes, uint64_t seed) {
  uint32_t r;
  int err;

  memset(c, 0, sizeof *c);
  c->types = calloc(ntypes, sizeof *c->types);
  if (!c->types) return GS_ENOMEM;
  c->ntypes = ntypes;
  if ((err = pool_alloc(&c->all, ntypes)) || (err = pool_alloc(&c->head, ntypes)) ||
      (err = pool_alloc(&c->large, ntypes)))
    return err;
  for (r = 0; r < ntypes; r++) {
    gs_mock_type *t = &c->types[r];
    if (r < NCORE) {
      const struct core_type *k = &core_types[r];
      t->shape = (uint8_t)k->shape;
      t->fields = k->fields;
      t->elem = k->shape == GS_MOCK_CLASS ? 8 : k->elem_or_size;
      t->size = k->shape == GS_MOCK_CLASS ? k->elem_or_size : 0;
      t->name_off = (uint32_t)c->names_len;
      t->name_len = (uint32_t)strlen(k->name);
      if ((err = names_append(c, k->name, t->name_len))) return err;
    } else if ((err = generated_type(c, r - (uint32_t)NCORE, seed, t))) {
      return err;
    }
    t->id = type_id(r, seed);
    t->late = r > 0 && gs_mock_mix(seed ^ (UINT64_C(0x6c617465) + r)) % LATE_ONE_IN == 0;
    pool_add(&c->all, r);
    if (t->shape == GS_MOCK_REFS ||
        (t->shape == GS_MOCK_CLASS && t->fields >= GS_MOCK_HEAD_REFS))
      pool_add(&c->head, r);
    if (t->shape != GS_MOCK_CLASS) pool_add(&c->large, r);
  }
  pool_index(&c->all);
  pool_index(&c->head);
  pool_index(&c->large);
  return GS_OK;
}

void gs_mock_catalog_free(gs_mock_catalog *c) {
  free(c->types);
  free(c->names);
  pool_free(&c->all);
  pool_free(&c->head);
  pool_free(&c->large);
}
