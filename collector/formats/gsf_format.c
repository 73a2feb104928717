/* gsf_format.c - which reader a heap file needs, from its first bytes. */
#include "gsf_format.h"

#include <string.h>
#include "gsf_gcdump.h"
#include "gsf_hprof.h"
#include "gsf_v8.h"

static const struct {
  gsf_format format;
  const char *name;
  int (*sniff)(const unsigned char *head, size_t n);
  gsf_convert_fn convert;
  int holds_heap;
} formats[] = {
  {GSF_HEAPSNAPSHOT, "heapsnapshot", gsf_v8_sniff, gsf_v8_convert, 1},
  {GSF_HPROF, "hprof", gsf_hprof_sniff, gsf_hprof_convert, 0},
  {GSF_GCDUMP, "gcdump", gsf_gcdump_sniff, gsf_gcdump_convert, 1},
};
#define NFORMATS (sizeof formats / sizeof formats[0])

gsf_format gsf_detect(const unsigned char *head, size_t n) {
  size_t i;
  for (i = 0; i < NFORMATS; i++)
    if (formats[i].sniff(head, n)) return formats[i].format;
  return GSF_RECORDS;
}

const char *gsf_format_name(gsf_format f) {
  size_t i;
  for (i = 0; i < NFORMATS; i++)
    if (formats[i].format == f) return formats[i].name;
  return "gclog";
}

gsf_convert_fn gsf_converter(gsf_format f) {
  size_t i;
  for (i = 0; i < NFORMATS; i++)
    if (formats[i].format == f) return formats[i].convert;
  return NULL;
}

int gsf_format_holds_heap(gsf_format f) {
  size_t i;
  for (i = 0; i < NFORMATS; i++)
    if (formats[i].format == f) return formats[i].holds_heap;
  return 0;
}

/* ---- files taken for heap dumps ---------------------------------------- */

/* Read as records, each would fail once a line, for reasons the screen
 * hides; it fails once instead, saying what it is. */
#define MAGIC(bytes) (bytes), sizeof(bytes) - 1
static const struct {
  const char *magic;
  size_t len;
  const char *what;
} others[] = {
  {MAGIC("Nettrace"), "an EventPipe trace (.nettrace), not a .gcdump (dotnet-gcdump collect "
   "writes a .NET heap as one)"},
  {MAGIC("\x14\0\0\0!FastSerialization.1"), "a PerfView file that is not a .gcdump"},
  {MAGIC("\x7f" "ELF"), "an ELF file (a core dump or a program), not a heap dump"},
  {MAGIC("MDMP"), "a Windows minidump, not a heap dump"},
  {MAGIC("\0\x12portable heap dump"), "an IBM portable heap dump (.phd), which gcsnap does not "
   "read (an HPROF dump it does)"},
  {MAGIC("PK\x03\x04"), "a zip archive: extract the heap file from it first"},
  {MAGIC("\xfd" "7zXZ"), "xz-compressed: decompress it first (xz -d); gzip and zstd are read as "
   "they are"},
  {MAGIC("BZh"), "bzip2-compressed: decompress it first (bunzip2); gzip and zstd are read as "
   "they are"},
};

/* Windows PowerShell's > writes what a command prints as UTF-16, with a
 * byte order mark. Without the mark, text in UTF-16 still shows as a zero
 * every other byte, which no record has. */
static int utf16(const unsigned char *h, size_t n) {
  if (n >= 2 && ((h[0] == 0xff && h[1] == 0xfe) || (h[0] == 0xfe && h[1] == 0xff))) return 1;
  return n >= 4 && ((h[0] && !h[1] && h[2] && !h[3]) || (!h[0] && h[1] && !h[2] && h[3]));
}

static int contains(const unsigned char *h, size_t n, const char *s) {
  size_t len = strlen(s), i;
  for (i = 0; i + len <= n; i++)
    if (memcmp(h + i, s, len) == 0) return 1;
  return 0;
}

/* Whether the object at h[i] starts with a member a V8 heap snapshot has
 * after its "snapshot": one rewritten with its keys sorted, say. */
static int v8_member_first(const unsigned char *h, size_t i, size_t n) {
  static const char *const keys[] = {"\"nodes\"", "\"edges\"", "\"strings\"", "\"locations\"",
                                     "\"samples\"", "\"trace_function_infos\"", "\"trace_tree\""};
  size_t k;
  if (h[i++] != '{') return 0;
  while (i < n && (h[i] == ' ' || h[i] == '\t' || h[i] == '\r' || h[i] == '\n')) i++;
  for (k = 0; k < sizeof keys / sizeof keys[0]; k++)
    if (n - i >= strlen(keys[k]) && memcmp(h + i, keys[k], strlen(keys[k])) == 0) return 1;
  return 0;
}

/* JSON that is no V8 heap snapshot (gsf_v8_sniff took those). */
static const char *json(const unsigned char *h, size_t n) {
  size_t i = gsf_v8_json_start(h, n);
  if (i == n || (h[i] != '{' && h[i] != '[')) return NULL;
  if (contains(h, n, "\"type\":\"Inspector\"") || contains(h, n, "\"type\":\"GCDebugging\""))
    return "a JavaScriptCore heap snapshot (Safari, Bun), which gcsnap does not read";
  if (v8_member_first(h, i, n))
    return "a V8 heap snapshot whose members are out of V8's order, which gcsnap reads as "
           "DevTools does: reorder it first (jq '{snapshot, nodes, edges, strings}')";
  return "JSON, but not a V8 heap snapshot (whose first member is \"snapshot\"): a heap or "
         "CPU profile (.heapprofile, .cpuprofile) or a trace holds no object graph";
}

const char *gsf_not_read(const unsigned char *head, size_t n, gs_diag_code *code) {
  size_t i;
  *code = GS_D_BAD_HEAP_FILE;
  for (i = 0; i < sizeof others / sizeof others[0]; i++)
    if (n >= others[i].len && memcmp(head, others[i].magic, others[i].len) == 0)
      return others[i].what;
  if (utf16(head, n)) {
    *code = GS_D_NOT_TEXT;
    return "UTF-16 text (as Windows PowerShell's > writes it), where records are UTF-8: convert "
           "it first (iconv -f UTF-16 -t UTF-8)";
  }
  return json(head, n);
}
