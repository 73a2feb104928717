/* gsf_format.c - which reader a heap file needs, from its first bytes. */
#include "gsf_format.h"
#include "gsf_hprof.h"
#include "gsf_v8.h"
#include "gsf_gcdump.h"

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
