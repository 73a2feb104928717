/* gs_error.c - messages for the shared error codes. */
#include "gs_error.h"

const char *gs_strerror(int err) {
  switch (err) {
  case GS_OK: return "success";
  case GS_EOF: return "end of input";
  case GS_ENOMEM: return "out of memory";
  case GS_EIO: return "input/output error";
  case GS_EFORMAT: return "invalid record format";
  case GS_ELIMIT: return "limit exceeded";
  case GS_EINVAL: return "invalid argument";
  default: return "unknown error";
  }
}
