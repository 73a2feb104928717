/* gsgen.c - deterministic generator of realistic RPM GC heap dumps.
 *
 * gcsnap-gen writes a dump of any size for tests and benchmarks. The same
 * seed and knobs give the same bytes on every run, and memory does not grow
 * with the object count: every property a record needs about another object
 * (its ID, whether it is garbage) is a function of that object's index, so
 * objects are written as they are made and never kept.
 *
 * Shape of a section of n objects (see README.md for the knobs):
 *  - Object i has ID base + 0x20*i + 8*jitter(i), jitter in 0..3: IDs ascend
 *    like allocation addresses and any index can be named before it is
 *    written, so references go forward as well as backward.
 *  - The index range is cut into chunks; the tail of each chunk is garbage.
 *    No live object and no root names a garbage object, so garbage is
 *    unreachable by construction. Garbage references garbage of its own
 *    range (cycles) and live objects.
 *  - Live objects, numbered k = 0, 1, ... in index order, form groups of
 *    four. The head of group g (k = 4g) references the heads of groups
 *    2g+1 and 2g+2 and the three other members of its group, and the head
 *    of group 0 is a strong root, so every live object is reachable.
 *    Members reference what their type's pointer fields hold: neighbours,
 *    a few popular early objects, or anything.
 *  - Types have Zipf popularity over a catalogue of .NET names; most type
 *    records come just before the first object that uses them, a few after.
 *
 * Random draws use only integer arithmetic, so the output does not depend on
 * the C library's floating point. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#include <fcntl.h>
#include <io.h>
#endif

#include "gs_error.h"
#include "gs_writer.h"

#define GEN_PROGRAM        "gcsnap-gen"
#define GEN_EXIT_USAGE     2
#define GEN_MIN_TYPES      20u
#define GEN_MAX_TYPES      1000000u
#define GEN_MAX_SECTIONS   1000u
#define GEN_MAX_REFS       4096u      /* references written for one object */
#define GEN_LARGE_SIZE     85000u     /* large object heap threshold */
#define GEN_ID_BASE        UINT64_C(0x200000000)
#define GEN_ID_STRIDE      UINT64_C(0x20)
#define GEN_CHUNK          1024u      /* objects per live+garbage chunk */
#define GEN_GROUP          4u         /* live objects per reachability group */
#define GEN_ROOT_ONE_IN    64u        /* share of live objects that are roots */
#define GEN_LATE_ONE_IN    20u        /* share of types written after first use */
#define GEN_LATE_FLUSH     65536u     /* objects between writes of late types */
#define GEN_PPM            1000000u   /* percent knobs are kept in ppm */

/* ---- random numbers: splitmix64 to seed and hash, xoshiro256** to draw ---- */

typedef struct gen_rng { uint64_t s[4]; } gen_rng;

static uint64_t gen_mix(uint64_t x) {
  x += UINT64_C(0x9e3779b97f4a7c15);
  x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
  return x ^ (x >> 31);
}

static uint64_t gen_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static void gen_rng_seed(gen_rng *r, uint64_t seed) {
  int i;
  for (i = 0; i < 4; i++) {
    seed = gen_mix(seed);
    r->s[i] = seed;
  }
}

static uint64_t gen_rng_next(gen_rng *r) {
  uint64_t *s = r->s;
  uint64_t out = gen_rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = gen_rotl(s[3], 45);
  return out;
}

/* Uniform in [0, n) for n > 0. Below 2^32 a multiply replaces the division
 * (Lemire); the bias of either is far below anything a test could notice. */
static uint64_t gen_below(gen_rng *r, uint64_t n) {
  uint64_t x = gen_rng_next(r);
  if (n <= UINT64_C(0xffffffff)) return ((x >> 32) * n) >> 32;
  return x % n;
}

/* True with probability ppm / 1e6. */
static int gen_chance(gen_rng *r, uint32_t ppm) { return gen_below(r, GEN_PPM) < ppm; }

/* Heavy-tailed length: P(len >= x) is about 1/(x+1); median 0. */
static uint64_t gen_heavy(gen_rng *r, uint64_t cap) {
  uint64_t u = 1 + gen_below(r, UINT64_C(1) << 24);
  uint64_t len = ((UINT64_C(1) << 24) / u) - 1;
  return len < cap ? len : cap;
}

static uint64_t gen_round8(uint64_t n) { return (n + 7) & ~UINT64_C(7); }

/* ---- type catalogue ---- */

typedef enum gen_shape {
  GEN_CLASS,    /* fixed size, pointer fields */
  GEN_STRING,   /* System.String */
  GEN_VALUES,   /* array without references */
  GEN_REFS      /* array of references (or of structs holding them) */
} gen_shape;

typedef struct gen_type {
  uint64_t id;
  uint32_t name_off;
  uint32_t name_len;
  uint8_t shape;
  uint8_t fields;     /* class: pointer fields */
  uint16_t elem;      /* arrays: element size; string: char size */
  uint32_t size;      /* class: instance size */
  uint8_t late;       /* written after its first use */
} gen_type;

#define GEN_GUIDE_BITS 12

typedef struct gen_pool {      /* types eligible for one role, by popularity */
  uint32_t *ranks;
  uint64_t *cdf;               /* cumulative weights */
  uint32_t n;
  /* guide[b]: first entry whose cdf exceeds b << shift, so a draw only
   * searches between two neighbouring guides */
  uint32_t guide[(1u << GEN_GUIDE_BITS) + 1];
  unsigned shift;
} gen_pool;

typedef struct gen_catalog {
  gen_type *types;
  uint32_t ntypes;
  char *names;
  size_t names_len, names_cap;
  gen_pool all, head, large;
} gen_catalog;

/* The most common types of a real heap, most popular first. */
static const struct gen_core_type {
  const char *name;
  gen_shape shape;
  uint8_t fields;
  uint16_t elem_or_size;
} gen_core[] = {
  {"System.String", GEN_STRING, 0, 2},
  {"System.Object[] (Ptrs,ElemSize=8)", GEN_REFS, 0, 8},
  {"System.Char[] (NoPtrs,ElemSize=2)", GEN_VALUES, 0, 2},
  {"System.Byte[] (NoPtrs,ElemSize=1)", GEN_VALUES, 0, 1},
  {"System.Collections.Generic.Dictionary`2[[System.String, mscorlib],"
   "[System.Int32, mscorlib]]", GEN_CLASS, 6, 0x50},
  {"System.Collections.Generic.Dictionary`2+Entry[[System.String, mscorlib],"
   "[System.Int32, mscorlib]][] (Ptrs,ElemSize=24)", GEN_REFS, 0, 24},
  {"System.Int32[] (NoPtrs,ElemSize=4)", GEN_VALUES, 0, 4},
  {"System.RuntimeType", GEN_CLASS, 2, 0x28},
  {"System.Collections.Generic.List`1[[System.String, mscorlib]]", GEN_CLASS, 2, 0x20},
  {"System.EventHandler", GEN_CLASS, 2, 0x40},
  {"System.Collections.Hashtable", GEN_CLASS, 5, 0x50},
  {"System.Collections.Hashtable+bucket[] (Ptrs,ElemSize=24)", GEN_REFS, 0, 24},
  {"System.WeakReference", GEN_CLASS, 0, 0x18},
  {"System.Reflection.RuntimeMethodInfo", GEN_CLASS, 6, 0x68},
  {"System.Collections.Generic.List`1[[System.Object, mscorlib]]", GEN_CLASS, 2, 0x20},
  {"System.Text.StringBuilder", GEN_CLASS, 2, 0x30},
  {"System.Action`1[[System.Object, mscorlib]]", GEN_CLASS, 2, 0x40},
  {"System.Double[] (NoPtrs,ElemSize=8)", GEN_VALUES, 0, 8},
  {"System.Collections.ArrayList", GEN_CLASS, 2, 0x28},
  {"System.Threading.Tasks.Task", GEN_CLASS, 4, 0x40},
  {"System.Collections.Concurrent.ConcurrentDictionary`2[[System.Int32, mscorlib],"
   "[System.Threading.Tasks.Task, mscorlib]]", GEN_CLASS, 5, 0x48},
  {"System.Func`2[[System.String, mscorlib],[System.Boolean, mscorlib]]", GEN_CLASS, 2, 0x40},
  {"System.String[] (Ptrs,ElemSize=8)", GEN_REFS, 0, 8},
  {"System.Int64[] (NoPtrs,ElemSize=8)", GEN_VALUES, 0, 8},
  {"System.Windows.DependencyProperty", GEN_CLASS, 6, 0x58},
  {"System.Windows.EffectiveValueEntry[] (Ptrs,ElemSize=16)", GEN_REFS, 0, 16},
  {"System.Threading.ExecutionContext", GEN_CLASS, 3, 0x38},
  {"System.Collections.Generic.KeyValuePair`2[[System.String, mscorlib],"
   "[System.Object, mscorlib]][] (Ptrs,ElemSize=16)", GEN_REFS, 0, 16},
  {"System.Globalization.CultureInfo", GEN_CLASS, 8, 0x90},
  {"System.Threading.TimerQueueTimer", GEN_CLASS, 5, 0x58},
  {"System.Threading.Timer", GEN_CLASS, 1, 0x20},
  {"System.Guid", GEN_CLASS, 0, 0x20},
  {"System.Int32", GEN_CLASS, 0, 0x18},
  {"System.Boolean[] (NoPtrs,ElemSize=1)", GEN_VALUES, 0, 1},
  {"System.Reflection.RuntimeAssembly", GEN_CLASS, 3, 0x30},
  {"System.Collections.Generic.HashSet`1[[System.String, mscorlib]]", GEN_CLASS, 4, 0x40},
  {"System.Byte[] (Bytes > 10K,NoPtrs,ElemSize=1)", GEN_VALUES, 0, 1},
  {"<CppImplementationDetails>.$ArrayType$$$BY0A@E", GEN_VALUES, 0, 1},
  {"System.Xml.XmlElement", GEN_CLASS, 7, 0x50},
  {"System.Xml.XmlAttribute", GEN_CLASS, 4, 0x38},
};
#define GEN_NCORE (sizeof gen_core / sizeof gen_core[0])

/* Generated names: namespace x adjective x noun gives 24 576 distinct bases. */
static const char *const gen_namespaces[][2] = {
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
static const char *const gen_adjectives[] = {
  "Cached", "Pooled", "Shared", "Pending", "Deferred", "Weak", "Composite",
  "Remote", "Local", "Async", "Buffered", "Indexed", "Ordered", "Scoped",
  "Static", "Dynamic", "Virtual", "Primary", "Secondary", "Transient",
  "Persistent", "Sealed", "Observable", "Lazy", "Keyed", "Default", "Nested",
  "Partial", "Immutable", "Concurrent", "Compiled", "Reusable",
};
static const char *const gen_nouns[] = {
  "Order", "Customer", "Session", "Request", "Response", "Token", "Message",
  "Channel", "Segment", "Buffer", "Record", "Entry", "Node", "Handler",
  "Provider", "Factory", "Manager", "Resolver", "Listener", "Visitor",
  "Builder", "Reader", "Writer", "Context", "Binding", "Template", "Resource",
  "Schedule", "Invoice", "Route", "Frame", "Element",
};
static const char *const gen_nested[] = {
  "+Enumerator", "+Node", "+<>c__DisplayClass5", "+Entry", "+<>c", "+State",
};
#define GEN_COUNT(a) (sizeof (a) / sizeof (a)[0])

static int gen_names_append(gen_catalog *c, const char *s, size_t len) {
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
static uint8_t gen_class_fields(uint64_t h) {
  static const uint8_t table[16] = {0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 3, 3, 4, 6};
  return table[h & 15];
}

/* Builds the name and shape of generated type q into t. */
static int gen_generated_type(gen_catalog *c, uint32_t q, uint64_t seed, gen_type *t) {
  const uint32_t nns = GEN_COUNT(gen_namespaces), nadj = GEN_COUNT(gen_adjectives);
  const uint32_t nnoun = GEN_COUNT(gen_nouns), nbases = nns * nadj * nnoun;
  /* 7919 is prime to nbases (2^13 * 3), so this permutes the bases: popular
   * types do not all share one adjective and noun */
  uint32_t b = (uint32_t)(((uint64_t)(q % nbases) * 7919) % nbases);
  uint64_t h = gen_mix(seed ^ (UINT64_C(0x7479706573) + q));
  const char *ns = gen_namespaces[b % nns][0];
  const char *asm_name = gen_namespaces[b % nns][1];
  const char *adj = gen_adjectives[(b / nns) % nadj];
  const char *noun = gen_nouns[(b / nns / nadj) % nnoun];
  uint32_t round = q / nbases;
  unsigned pick = (unsigned)(h % 100);
  char base[160], name[512];
  int len;

  if (round > 0)
    snprintf(base, sizeof base, "%s.%s%s%u", ns, adj, noun, (unsigned)round + 1);
  else
    snprintf(base, sizeof base, "%s.%s%s", ns, adj, noun);
  t->shape = GEN_CLASS;
  t->fields = gen_class_fields(h >> 8);
  t->size = (uint32_t)(24 + 8 * (uint64_t)t->fields + 8 * ((h >> 12) & 3));
  t->elem = 8;
  if (pick < 50) {
    len = snprintf(name, sizeof name, "%s", base);
  } else if (pick < 58) {
    len = snprintf(name, sizeof name, "%s%s", base,
                   gen_nested[(h >> 16) % GEN_COUNT(gen_nested)]);
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
    t->shape = GEN_REFS;
  } else if (pick < 94) {
    len = snprintf(name, sizeof name,
                   "System.Collections.Generic.Dictionary`2+Entry[[System.String, mscorlib],"
                   "[%s, %s]][] (Ptrs,ElemSize=24)", base, asm_name);
    t->shape = GEN_REFS;
    t->elem = 24;
  } else {
    t->elem = (uint16_t)(8 * (1 + ((h >> 20) & 3)));
    len = snprintf(name, sizeof name, "%s[] (NoPtrs,ElemSize=%u)", base, (unsigned)t->elem);
    t->shape = GEN_VALUES;
  }
  if (len < 0 || (size_t)len >= sizeof name) return GS_ELIMIT;
  t->name_off = (uint32_t)c->names_len;
  t->name_len = (uint32_t)len;
  return gen_names_append(c, name, (size_t)len);
}

/* Zipf weight of popularity rank r; the first type (System.String) gets a
 * boost, as strings are the most common objects of nearly every heap. */
static uint64_t gen_weight(uint32_t r) {
  uint64_t w = (UINT64_C(1) << 40) / ((uint64_t)r + 1);
  return r == 0 ? 4 * w : w;
}

static void gen_pool_add(gen_pool *p, uint32_t rank) {
  uint64_t prev = p->n ? p->cdf[p->n - 1] : 0;
  p->ranks[p->n] = rank;
  p->cdf[p->n] = prev + gen_weight(rank);
  p->n++;
}

static int gen_pool_alloc(gen_pool *p, uint32_t n) {
  p->ranks = malloc(sizeof *p->ranks * n);
  p->cdf = malloc(sizeof *p->cdf * n);
  p->n = 0;
  return p->ranks && p->cdf ? GS_OK : GS_ENOMEM;
}

static void gen_pool_index(gen_pool *p) {
  uint64_t total = p->cdf[p->n - 1];
  uint32_t b, i = 0;
  p->shift = 0;
  while ((total >> p->shift) >= (1u << GEN_GUIDE_BITS)) p->shift++;
  for (b = 0; b <= (1u << GEN_GUIDE_BITS); b++) {
    while (i < p->n - 1 && p->cdf[i] <= ((uint64_t)b << p->shift)) i++;
    p->guide[b] = i;
  }
}

static void gen_pool_free(gen_pool *p) {
  free(p->ranks);
  free(p->cdf);
}

/* Draws a type of pool p by popularity. */
static uint32_t gen_pool_pick(const gen_pool *p, gen_rng *r) {
  uint64_t u = gen_below(r, p->cdf[p->n - 1]);
  uint32_t lo = p->guide[u >> p->shift], hi = p->guide[(u >> p->shift) + 1];
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (p->cdf[mid] > u) hi = mid; else lo = mid + 1;
  }
  return p->ranks[lo];
}

/* Type IDs follow popularity loosely, like IDs handed out in load order:
 * ranks are shuffled within blocks of 16. */
static uint64_t gen_type_id(uint32_t rank, uint64_t seed) {
  uint32_t shuffle = (uint32_t)(gen_mix(seed ^ UINT64_C(0x6964)) & 15);
  return 1 + (uint64_t)((rank & ~15u) | ((rank ^ shuffle) & 15u));
}

static int gen_catalog_build(gen_catalog *c, uint32_t ntypes, uint64_t seed) {
  uint32_t r;
  int err;

  memset(c, 0, sizeof *c);
  c->types = calloc(ntypes, sizeof *c->types);
  if (!c->types) return GS_ENOMEM;
  c->ntypes = ntypes;
  if ((err = gen_pool_alloc(&c->all, ntypes)) || (err = gen_pool_alloc(&c->head, ntypes)) ||
      (err = gen_pool_alloc(&c->large, ntypes)))
    return err;
  for (r = 0; r < ntypes; r++) {
    gen_type *t = &c->types[r];
    if (r < GEN_NCORE) {
      const struct gen_core_type *k = &gen_core[r];
      t->shape = (uint8_t)k->shape;
      t->fields = k->fields;
      t->elem = k->shape == GEN_CLASS ? 8 : k->elem_or_size;
      t->size = k->shape == GEN_CLASS ? k->elem_or_size : 0;
      t->name_off = (uint32_t)c->names_len;
      t->name_len = (uint32_t)strlen(k->name);
      if ((err = gen_names_append(c, k->name, t->name_len))) return err;
    } else if ((err = gen_generated_type(c, r - (uint32_t)GEN_NCORE, seed, t))) {
      return err;
    }
    t->id = gen_type_id(r, seed);
    t->late = r > 0 && gen_mix(seed ^ (UINT64_C(0x6c617465) + r)) % GEN_LATE_ONE_IN == 0;
    gen_pool_add(&c->all, r);
    if (t->shape == GEN_REFS || (t->shape == GEN_CLASS && t->fields >= GEN_GROUP + 1))
      gen_pool_add(&c->head, r);
    if (t->shape != GEN_CLASS) gen_pool_add(&c->large, r);
  }
  gen_pool_index(&c->all);
  gen_pool_index(&c->head);
  gen_pool_index(&c->large);
  return GS_OK;
}

static void gen_catalog_free(gen_catalog *c) {
  free(c->types);
  free(c->names);
  gen_pool_free(&c->all);
  gen_pool_free(&c->head);
  gen_pool_free(&c->large);
}

/* ---- options ---- */

typedef struct gen_options {
  uint64_t objects;
  uint64_t types;      /* 0: derived from objects */
  uint64_t seed;
  uint32_t garbage_ppm;
  uint32_t large_ppm;
  uint32_t sections;
  const char *out;
} gen_options;

static void gen_usage(FILE *f) {
  fprintf(f,
    "usage: " GEN_PROGRAM " [options]\n"
    "Writes a deterministic, valid RPM GC heap dump.\n"
    "  --objects N    objects in the dump (default 100000)\n"
    "  --types N      distinct types, %u-%u (default objects/100, at least %u,\n"
    "                 at most 20000)\n"
    "  --seed S       random seed, decimal or 0x hex (default 1)\n"
    "  --garbage PCT  share of objects unreachable by construction (default 10)\n"
    "  --large PCT    share of objects of 85000 bytes or more (default 0.1)\n"
    "  --sections N   AppDomain sections sharing the objects (default 1)\n"
    "  -o FILE        output file (default standard output)\n"
    "  --help         this text\n",
    GEN_MIN_TYPES, GEN_MAX_TYPES, GEN_MIN_TYPES);
}

static int gen_bad(const char *opt, const char *why, const char *val) {
  fprintf(stderr, GEN_PROGRAM ": %s: %s: '%s'\n", opt, why, val);
  fprintf(stderr, "Try '" GEN_PROGRAM " --help'.\n");
  return GEN_EXIT_USAGE;
}

static int gen_parse_count(const char *opt, const char *val, uint64_t lo, uint64_t hi,
                           uint64_t *out) {
  char *end;
  unsigned long long v;
  int hex = val[0] == '0' && (val[1] == 'x' || val[1] == 'X');
  if (*val < '0' || *val > '9' || (hex && !isxdigit((unsigned char)val[2])))
    return gen_bad(opt, "not a non-negative integer", val);
  errno = 0;
  v = strtoull(hex ? val + 2 : val, &end, hex ? 16 : 10);
  if (*end != '\0') return gen_bad(opt, "not a non-negative integer", val);
  if (errno == ERANGE || v < lo || v > hi) return gen_bad(opt, "out of range", val);
  *out = v;
  return 0;
}

/* Parses a percentage 0-100 with up to four decimals into ppm, without
 * floating point, so that equal strings always mean equal output. */
static int gen_parse_percent(const char *opt, const char *val, uint32_t *ppm) {
  const char *p = val;
  uint64_t whole = 0, frac = 0;
  int digits = 0, fdigits = 0;
  for (; *p >= '0' && *p <= '9'; p++, digits++) {
    whole = whole * 10 + (uint64_t)(*p - '0');
    if (whole > 100) return gen_bad(opt, "out of range 0-100", val);
  }
  if (*p == '.') {
    for (p++; *p >= '0' && *p <= '9'; p++, fdigits++) {
      if (fdigits >= 4) return gen_bad(opt, "more than four decimals", val);
      frac = frac * 10 + (uint64_t)(*p - '0');
    }
  }
  if (*p != '\0' || digits + fdigits == 0) return gen_bad(opt, "not a percentage", val);
  while (fdigits++ < 4) frac *= 10;
  if (whole * 10000 + frac > 100 * 10000) return gen_bad(opt, "out of range 0-100", val);
  *ppm = (uint32_t)(whole * 10000 + frac);
  return 0;
}

/* Accepts "--name VALUE" and "--name=VALUE"; returns the value or NULL. */
static const char *gen_option_value(int argc, char **argv, int *i, const char *name,
                                    int *missing) {
  const char *arg = argv[*i];
  size_t n = strlen(name);
  if (strncmp(arg, name, n) != 0) return NULL;
  if (arg[n] == '=') return arg + n + 1;
  if (arg[n] != '\0') return NULL;
  if (*i + 1 >= argc) {
    *missing = 1;
    return NULL;
  }
  return argv[++*i];
}

/* Returns 0 to go on, or an exit code (0 after --help). */
static int gen_parse_args(int argc, char **argv, gen_options *o, int *done) {
  int i, rc = 0;
  uint64_t v;

  memset(o, 0, sizeof *o);
  o->objects = 100000;
  o->seed = 1;
  o->garbage_ppm = 10 * 10000;
  o->large_ppm = 1000;
  o->sections = 1;
  *done = 0;
  for (i = 1; i < argc && rc == 0; i++) {
    const char *arg = argv[i], *val;
    int missing = 0;
    if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
      gen_usage(stdout);
      *done = 1;
      return 0;
    } else if ((val = gen_option_value(argc, argv, &i, "--objects", &missing))) {
      rc = gen_parse_count("--objects", val, 0, UINT64_C(1) << 40, &o->objects);
    } else if ((val = gen_option_value(argc, argv, &i, "--types", &missing))) {
      rc = gen_parse_count("--types", val, GEN_MIN_TYPES, GEN_MAX_TYPES, &o->types);
    } else if ((val = gen_option_value(argc, argv, &i, "--seed", &missing))) {
      rc = gen_parse_count("--seed", val, 0, UINT64_MAX, &o->seed);
    } else if ((val = gen_option_value(argc, argv, &i, "--garbage", &missing))) {
      rc = gen_parse_percent("--garbage", val, &o->garbage_ppm);
    } else if ((val = gen_option_value(argc, argv, &i, "--large", &missing))) {
      rc = gen_parse_percent("--large", val, &o->large_ppm);
    } else if ((val = gen_option_value(argc, argv, &i, "--sections", &missing))) {
      rc = gen_parse_count("--sections", val, 1, GEN_MAX_SECTIONS, &v);
      o->sections = (uint32_t)v;
    } else if ((val = gen_option_value(argc, argv, &i, "-o", &missing)) ||
               (val = gen_option_value(argc, argv, &i, "--output", &missing))) {
      if (*val == '\0') rc = gen_bad("-o", "empty file name", val);
      o->out = val;
    } else if (missing) {
      fprintf(stderr, GEN_PROGRAM ": %s: missing value\nTry '" GEN_PROGRAM " --help'.\n", arg);
      rc = GEN_EXIT_USAGE;
    } else {
      fprintf(stderr, GEN_PROGRAM ": unknown argument '%s'\nTry '" GEN_PROGRAM " --help'.\n",
              arg);
      rc = GEN_EXIT_USAGE;
    }
  }
  if (rc == 0 && o->types == 0) {
    o->types = o->objects / 100;
    if (o->types < GEN_MIN_TYPES) o->types = GEN_MIN_TYPES;
    if (o->types > 20000) o->types = 20000;
  }
  return rc;
}

/* ---- sections ---- */

typedef struct gen_state {
  const gen_options *opt;
  gen_catalog cat;
  gs_writer *w;
  gen_rng rng;
  uint8_t *type_state;     /* per rank: 0 unwritten, 1 written, 2 waiting (late) */
  uint32_t *waiting;       /* late types used but not yet written */
  uint32_t nwaiting;
  unsigned root_combos;    /* bit kind*4 + flag index: combinations written */
  /* geometry of the current section */
  uint64_t n;              /* objects */
  uint64_t chunk;          /* chunk length */
  uint64_t chunk_live;     /* live objects at the head of each chunk */
  uint64_t live;           /* live objects in the section */
  uint64_t id_base;
  uint64_t id_key;
  uint64_t refs[GEN_MAX_REFS];
} gen_state;

enum { GEN_TYPE_UNWRITTEN = 0, GEN_TYPE_WRITTEN = 1, GEN_TYPE_WAITING = 2 };

static const unsigned gen_root_flags[4] = {0, 1, 2, 4};

static uint64_t gen_object_id(const gen_state *st, uint64_t i) {
  return st->id_base + GEN_ID_STRIDE * i + 8 * (gen_mix(st->id_key ^ i) & 3);
}

static int gen_is_garbage(const gen_state *st, uint64_t i) {
  return i % st->chunk >= st->chunk_live;
}

static uint64_t gen_live_index(const gen_state *st, uint64_t k) {
  return (k / st->chunk_live) * st->chunk + k % st->chunk_live;
}

static uint64_t gen_live_number(const gen_state *st, uint64_t i) {
  return (i / st->chunk) * st->chunk_live + i % st->chunk;
}

static int gen_write_type(gen_state *st, uint32_t rank) {
  const gen_type *t = &st->cat.types[rank];
  st->type_state[rank] = GEN_TYPE_WRITTEN;
  return gs_writer_type(st->w, t->id, st->cat.names + t->name_off, t->name_len);
}

/* Makes sure type rank is or will be defined in this section. */
static int gen_use_type(gen_state *st, uint32_t rank) {
  if (st->type_state[rank] != GEN_TYPE_UNWRITTEN) return GS_OK;
  if (st->cat.types[rank].late) {
    st->type_state[rank] = GEN_TYPE_WAITING;
    st->waiting[st->nwaiting++] = rank;
    return GS_OK;
  }
  return gen_write_type(st, rank);
}

static int gen_flush_late_types(gen_state *st) {
  uint32_t i;
  int err;
  for (i = 0; i < st->nwaiting; i++)
    if ((err = gen_write_type(st, st->waiting[i]))) return err;
  st->nwaiting = 0;
  return GS_OK;
}

/* A live object for a live source k to reference: a neighbour, one of the
 * popular long-lived objects at the start of the heap, or anything. */
static uint64_t gen_live_target(gen_state *st, uint64_t k) {
  uint64_t pick = gen_below(&st->rng, 100), t;
  if (pick < 55) {
    uint64_t d = 1 + gen_below(&st->rng, 48);
    if (gen_below(&st->rng, 2) && k >= d) t = k - d;
    else t = k + d < st->live ? k + d : k - (k >= d ? d : 0);
  } else if (pick < 80) {
    uint64_t u = gen_below(&st->rng, 2048);
    t = (u * u / 2048) % st->live;
  } else {
    t = gen_below(&st->rng, st->live);
  }
  return gen_object_id(st, gen_live_index(st, t));
}

/* A target for garbage object i: garbage of its own range, or live. */
static uint64_t gen_garbage_target(gen_state *st, uint64_t i) {
  uint64_t start = i - i % st->chunk + st->chunk_live;
  uint64_t end = start - st->chunk_live + st->chunk;
  if (end > st->n) end = st->n;
  if (st->live == 0 || gen_below(&st->rng, 100) < 60)
    return gen_object_id(st, start + gen_below(&st->rng, end - start));
  return gen_live_target(st, gen_live_number(st, i - i % st->chunk) + st->chunk_live - 1);
}

static size_t gen_add_targets(gen_state *st, uint64_t i, uint64_t k, int garbage,
                              size_t nrefs, uint64_t want) {
  while (want-- > 0 && nrefs < GEN_MAX_REFS)
    st->refs[nrefs++] = garbage ? gen_garbage_target(st, i) : gen_live_target(st, k);
  return nrefs;
}

/* Non-null slots among n pointer slots: about three in four of a class's
 * fields, one in two of an array's elements (arrays are grown ahead of use). */
static uint64_t gen_nonnull(gen_state *st, uint64_t n, int array) {
  uint64_t set = 0;
  while (n > 0) {
    uint64_t bits = gen_rng_next(&st->rng);
    uint64_t null = array ? bits : bits & (bits >> 32);
    uint64_t j, m = n < 32 ? n : 32;
    for (j = 0; j < m; j++) set += !((null >> j) & 1);
    n -= m;
  }
  return set;
}

/* Arrays: a quarter empty, most short, a few with hundreds of elements. */
static uint64_t gen_array_length(gen_state *st, uint64_t cap) {
  uint64_t pick = gen_below(&st->rng, 100);
  if (pick < 25) return 0;
  if (pick < 87) return 1 + gen_below(&st->rng, 8);
  if (pick < 99) return 8 + gen_below(&st->rng, 24);
  return 64 + gen_heavy(&st->rng, cap - 64);
}

/* Length of a variable-size object of type t; large ones reach 85000 bytes. */
static uint64_t gen_length(gen_state *st, const gen_type *t, int large) {
  if (large) {
    uint64_t bytes = GEN_LARGE_SIZE + gen_heavy(&st->rng, 64) * 16384 +
                     gen_below(&st->rng, 65536);
    return (bytes + t->elem - 1) / t->elem;
  }
  if (t->shape == GEN_STRING) {
    uint64_t pick = gen_below(&st->rng, 100);
    if (pick < 85) return 1 + gen_below(&st->rng, 32);
    if (pick < 99) return 32 + gen_below(&st->rng, 224);
    return 256 + gen_below(&st->rng, 4096);
  }
  return gen_array_length(st, t->shape == GEN_REFS ? 1500 : 8000);
}

static uint64_t gen_size(const gen_type *t, uint64_t len) {
  uint64_t size;
  if (t->shape == GEN_CLASS) return t->size;
  if (t->shape == GEN_STRING) size = 22 + 2 * len;
  else size = 24 + (uint64_t)t->elem * len;
  return size < 24 ? 24 : gen_round8(size);
}

static int gen_root(gen_state *st, uint64_t id, unsigned kind, unsigned flag_index) {
  uint64_t container = 0;
  int err;
  if (kind == 4) {
    uint32_t rank = gen_pool_pick(&st->cat.all, &st->rng);
    if ((err = gen_use_type(st, rank))) return err;
    container = st->cat.types[rank].id;
  }
  st->root_combos |= 1u << (kind * 4 + flag_index);
  return gs_writer_root(st->w, id, kind, gen_root_flags[flag_index], container);
}

/* A root of the mix seen in real heaps: locals, handles, statics first. */
static int gen_random_root(gen_state *st, uint64_t id) {
  uint64_t pick = gen_below(&st->rng, 100), fpick = gen_below(&st->rng, 100);
  unsigned kind, flag_index = 0;
  if (pick < 35) {
    kind = 1;
    if (fpick < 10) flag_index = 1;
    else if (fpick < 15) flag_index = 3;
  } else if (pick < 60) {
    kind = 3;
    if (fpick < 15) flag_index = 2;
    else if (fpick < 25) flag_index = 1;
  } else if (pick < 80) {
    kind = 4;
  } else if (pick < 90) {
    kind = 5;
  } else if (pick < 96) {
    kind = 0;
    if (fpick < 20) flag_index = 1;
  } else {
    kind = 2;
  }
  return gen_root(st, id, kind, flag_index);
}

/* Writes object i of the section, with its roots. */
static int gen_object(gen_state *st, uint64_t i) {
  int garbage = gen_is_garbage(st, i);
  uint64_t k = garbage ? 0 : gen_live_number(st, i);
  int head = !garbage && k % GEN_GROUP == 0;
  int large = st->opt->large_ppm > 0 && gen_chance(&st->rng, st->opt->large_ppm);
  uint64_t id = gen_object_id(st, i), len = 0, size, slots = 0;
  int root = !garbage && (k == 0 || gen_below(&st->rng, GEN_ROOT_ONE_IN) == 0);
  int root_first = root && k != 0 && gen_below(&st->rng, 10) == 0;
  /* a large head must hold references: System.Object[] */
  uint32_t rank = large && head ? 1
                  : gen_pool_pick(large ? &st->cat.large : head ? &st->cat.head : &st->cat.all,
                                  &st->rng);
  const gen_type *t = &st->cat.types[rank];
  size_t nrefs = 0;
  int err;

  if ((err = gen_use_type(st, rank))) return err;
  if (t->shape != GEN_CLASS) len = gen_length(st, t, large);
  if (head && t->shape == GEN_REFS && len < GEN_GROUP + 1) len = GEN_GROUP + 1;
  size = gen_size(t, len);
  if (t->shape == GEN_CLASS) slots = t->fields;
  else if (t->shape == GEN_REFS) slots = len;

  if (head) {
    uint64_t g = k / GEN_GROUP, j;
    for (j = 2 * g + 1; j <= 2 * g + 2; j++)
      if (j * GEN_GROUP < st->live)
        st->refs[nrefs++] = gen_object_id(st, gen_live_index(st, j * GEN_GROUP));
    for (j = k + 1; j < k + GEN_GROUP && j < st->live; j++)
      st->refs[nrefs++] = gen_object_id(st, gen_live_index(st, j));
    slots = slots > GEN_GROUP + 1 ? slots - (GEN_GROUP + 1) : 0;
  }
  if (slots > 0) {
    uint64_t want = large ? 20 + gen_below(&st->rng, 300)
                          : gen_nonnull(st, slots, t->shape == GEN_REFS);
    if (want > slots) want = slots;
    nrefs = gen_add_targets(st, i, k, garbage, nrefs, want);
  }

  if (root_first && (err = gen_random_root(st, id))) return err;
  if ((err = gs_writer_object(st->w, id, t->id, size, st->refs, nrefs))) return err;
  if (root && !root_first) {
    /* the head of group 0 holds the whole live graph: keep it strong */
    if (k == 0) err = gen_root(st, id, 3, 0);
    else err = gen_random_root(st, id);
    if (err) return err;
    if (gen_below(&st->rng, 16) == 0 && (err = gen_random_root(st, id))) return err;
  }
  return GS_OK;
}

/* Writes a root of every kind and flag not seen yet, so that even small
 * dumps exercise them all. */
static int gen_missing_roots(gen_state *st) {
  unsigned kind, f;
  int err;
  if (st->live == 0) return GS_OK;
  for (kind = 0; kind < 6; kind++)
    for (f = 0; f < 4; f++) {
      uint64_t k = gen_below(&st->rng, st->live);
      if (st->root_combos & (1u << (kind * 4 + f))) continue;
      if ((err = gen_root(st, gen_object_id(st, gen_live_index(st, k)), kind, f))) return err;
    }
  return GS_OK;
}

static void gen_section_name(uint32_t s, char *buf, size_t cap) {
  if (s == 0) snprintf(buf, cap, "Contoso.Inventory.exe");
  else snprintf(buf, cap, "Contoso Plugin Host %u", (unsigned)s);
}

static void gen_section_geometry(gen_state *st, uint32_t s, uint64_t n) {
  uint64_t garbage, full, rest;
  st->n = n;
  st->chunk = n < GEN_CHUNK ? (n ? n : 1) : GEN_CHUNK;
  garbage = (st->chunk * st->opt->garbage_ppm + GEN_PPM / 2) / GEN_PPM;
  st->chunk_live = st->chunk - garbage;
  full = n / st->chunk;
  rest = n % st->chunk;
  st->live = full * st->chunk_live + (rest < st->chunk_live ? rest : st->chunk_live);
  /* with no live object (all garbage) nothing divides by chunk_live */
  st->id_key = gen_mix(st->opt->seed ^ (UINT64_C(0x6964) + s));
}

static int gen_section(gen_state *st, uint32_t s, uint64_t n, uint64_t *id_next) {
  char name[64];
  uint64_t i, timestamp;
  int err;

  gen_section_geometry(st, s, n);
  /* sections of one process share the address space: each gets its range */
  st->id_base = *id_next;
  *id_next += (n * GEN_ID_STRIDE + 0x1000000) & ~UINT64_C(0xffffff);
  gen_rng_seed(&st->rng, st->opt->seed ^ (UINT64_C(0x73656374) + s));
  memset(st->type_state, 0, st->cat.ntypes);
  st->nwaiting = 0;
  st->root_combos = 0;
  gen_section_name(s, name, sizeof name);
  /* ms since boot, like GetTickCount; c repeats its a's timestamp */
  timestamp = 0x100000 + (gen_mix(st->opt->seed) & 0xffffff) + (uint64_t)s * 0x2710;
  if ((err = gs_writer_section(st->w, 2, name, strlen(name), timestamp))) return err;
  for (i = 0; i < n; i++) {
    if ((err = gen_object(st, i))) return err;
    if ((i + 1) % GEN_LATE_FLUSH == 0 && (err = gen_flush_late_types(st))) return err;
  }
  if ((err = gen_missing_roots(st)) || (err = gen_flush_late_types(st))) return err;
  return gs_writer_end(st->w, name, strlen(name), timestamp);
}

static int gen_run(const gen_options *o, FILE *out) {
  gen_state st;
  uint64_t per, id_next = GEN_ID_BASE;
  uint32_t s;
  int err, ferr;

  memset(&st, 0, sizeof st);
  st.opt = o;
  if ((err = gen_catalog_build(&st.cat, (uint32_t)o->types, o->seed))) goto done;
  st.type_state = malloc(st.cat.ntypes);
  st.waiting = malloc(sizeof *st.waiting * st.cat.ntypes);
  if (!st.type_state || !st.waiting) {
    err = GS_ENOMEM;
    goto done;
  }
  if ((err = gs_writer_new_file(&st.w, out))) goto done;
  per = o->objects / o->sections;
  for (s = 0; s < o->sections && !err; s++)
    err = gen_section(&st, s, per + (s == 0 ? o->objects % o->sections : 0), &id_next);
  ferr = gs_writer_free(st.w);
  if (!err) err = ferr;
done:
  gen_catalog_free(&st.cat);
  free(st.type_state);
  free(st.waiting);
  return err;
}

int main(int argc, char **argv) {
  gen_options o;
  FILE *out = stdout;
  int done, rc, err;

  if ((rc = gen_parse_args(argc, argv, &o, &done)) != 0 || done) return rc;
  if (o.out) {
    out = fopen(o.out, "wb");
    if (!out) {
      fprintf(stderr, GEN_PROGRAM ": %s: %s\n", o.out, strerror(errno));
      return 1;
    }
  } else {
#ifdef _WIN32
    _setmode(_fileno(stdout), _O_BINARY);
#endif
  }
  err = gen_run(&o, out);
  if (fflush(out) != 0 && !err) err = GS_EIO;
  if (out != stdout && fclose(out) != 0 && !err) err = GS_EIO;
  if (err) {
    fprintf(stderr, GEN_PROGRAM ": %s%s%s\n", o.out ? o.out : "standard output",
            ": ", gs_strerror(err));
    return 1;
  }
  return 0;
}
