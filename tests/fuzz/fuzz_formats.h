/* fuzz_formats.h - what the targets of the foreign heap file readers share:
 * one input through a converter, with the output checked. */
#ifndef FUZZ_FORMATS_H
#define FUZZ_FORMATS_H

#include <stddef.h>
#include <stdint.h>
#include "gsf_format.h"

/* Converts data with convert into memory. The result must be GS_OK or a
 * GS_E* code with a message; records written for GS_OK must be valid
 * but for repeated IDs (the validator finds no other error in them), in one
 * section, or up to max_sections (a file may hold several heaps). */
void fuzz_formats_run(gsf_convert_fn convert, const uint8_t *data, size_t size,
                      uint64_t max_sections);

#endif
