/* gs_diag.c - names and severities of the record format diagnostics.
 *
 * The names are part of the command-line contract: scripts match on them, so
 * a name never changes once released. */
#include "gs_diag.h"

static const char *const diag_names[GS_D_COUNT_] = {
  [GS_D_UNKNOWN_RECORD] = "unknown-record",
  [GS_D_MISSING_FIELD] = "missing-field",
  [GS_D_EXTRA_FIELD] = "extra-field",
  [GS_D_NOT_HEX] = "not-hex",
  [GS_D_OVERFLOW] = "overflow",
  [GS_D_NEGATIVE_SIZE] = "negative-size",
  [GS_D_OUTSIDE_SECTION] = "outside-section",
  [GS_D_NESTED_SECTION] = "nested-section",
  [GS_D_SECTION_NAME] = "section-name",
  [GS_D_UNTERMINATED] = "unterminated",
  [GS_D_NO_SECTION] = "no-section",
  [GS_D_DUPLICATE_OBJECT] = "duplicate-object",
  [GS_D_TYPE_REDEFINED] = "type-redefined",
  [GS_D_ROOT_KIND] = "root-kind",
  [GS_D_STATIC_CONTAINER] = "static-container",
  [GS_D_NOT_TEXT] = "not-text",
  [GS_D_LINE_TOO_LONG] = "line-too-long",
  [GS_D_BAD_HEAP_FILE] = "bad-heap-file",
  [GS_D_TRUNCATED_HEAP_FILE] = "truncated-heap-file",
  [GS_D_BYTES_OVERFLOW] = "bytes-overflow",
  [GS_D_TOO_MANY_REFS] = "too-many-references",
  [GS_D_DANGLING_REFERENCE] = "dangling-reference",
  [GS_D_DANGLING_ROOT] = "dangling-root",
  [GS_D_UNDEFINED_TYPE] = "undefined-type",
  [GS_D_ROOT_FLAGS] = "root-flags",
  [GS_D_VERSION] = "version",
};

const char *gs_diag_name(gs_diag_code code) {
  if ((int)code <= 0 || code >= GS_D_COUNT_) return "unknown";
  return diag_names[code];
}

gs_severity gs_diag_severity(gs_diag_code code) {
  return code >= GS_D_DANGLING_REFERENCE ? GS_SEV_WARNING : GS_SEV_ERROR;
}
