/* fuzz_v8.c - libFuzzer target for the V8 heap snapshot reader
 * (collector/formats): any bytes give records the validator accepts, or an
 * error with a message. */
#include "fuzz_formats.h"
#include "gsf_v8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_formats_run(gsf_v8_convert, data, size, 1);
  return 0;
}
