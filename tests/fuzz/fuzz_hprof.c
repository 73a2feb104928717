/* fuzz_hprof.c - libFuzzer target for the HPROF reader (collector/formats):
 * any bytes give records the validator accepts, or an error with a message. */
#include "fuzz_formats.h"
#include "gsf_hprof.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_formats_run(gsf_hprof_convert, data, size, UINT64_MAX);  /* a section a heap dump */
  return 0;
}
