/* gs_spool.c - snapshots waiting for the collector, one file each (see
 * gs_spool.h for the format and the bound).
 *
 * The spool keeps no index in memory: the folder is the truth, listed
 * again when needed. It holds a handful of files, so a listing costs
 * little, and nothing can disagree with the disk after a crash. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gs_port.h"
#include "gs_spool.h"

#define AGENT_NAME "gcsnap-agent"
#define SPOOL_ID_DIGITS 20
#define SPOOL_TMP_SUFFIX GS_SPOOL_SUFFIX ".tmp"
#define SPOOL_HEADER_MAX (sizeof GS_SPOOL_MAGIC + 32 + GS_SPOOL_TRIGGER_MAX)
#define SPOOL_CHUNK (64u << 10)

typedef struct spool_entry {
  uint64_t id, bytes;
} spool_entry;

struct gs_spool {
  char *dir;
  unsigned max_files;
  uint64_t max_bytes;
  /* the snapshot being written */
  gs_port_file *f;
  uint64_t writing_id;
  char *tmp_path;
  /* the last listing */
  spool_entry *entries;
  size_t count, cap;
  char error[320];
};

static int spool_fail(gs_spool *sp, int err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(sp->error, sizeof sp->error, fmt, ap);
  va_end(ap);
  return err;
}

const char *gs_spool_error(const gs_spool *sp) {
  return sp->error;
}

/* ---- names ---- */

/* DIR/ID.gcspool, or with the temporary suffix; malloc'd. */
static char *spool_path(const gs_spool *sp, uint64_t id, int tmp) {
  size_t n = strlen(sp->dir) + SPOOL_ID_DIGITS + sizeof SPOOL_TMP_SUFFIX + 2;
  char *p = malloc(n);
  if (p)
    snprintf(p, n, "%s/%0*llu%s", sp->dir, SPOOL_ID_DIGITS, (unsigned long long)id,
             tmp ? SPOOL_TMP_SUFFIX : GS_SPOOL_SUFFIX);
  return p;
}

/* The ID a spool file name holds, and whether it is a temporary file; 0
 * when the name is not the spool's. */
static uint64_t spool_parse_name(const char *name, int *tmp) {
  uint64_t id = 0;
  int i;
  for (i = 0; i < SPOOL_ID_DIGITS; i++) {
    if (name[i] < '0' || name[i] > '9') return 0;
    if (id > (UINT64_MAX - 9) / 10) return 0;
    id = id * 10 + (uint64_t)(name[i] - '0');
  }
  if (!strcmp(name + i, GS_SPOOL_SUFFIX)) *tmp = 0;
  else if (!strcmp(name + i, SPOOL_TMP_SUFFIX)) *tmp = 1;
  else return 0;
  return id;
}

/* ---- listing ---- */

typedef struct list_ctx {
  gs_spool *sp;
  int remove_tmp;
} list_ctx;

static int spool_add(gs_spool *sp, uint64_t id, uint64_t bytes) {
  if (sp->count == sp->cap) {
    size_t cap = sp->cap ? sp->cap * 2 : 16;
    spool_entry *e = realloc(sp->entries, cap * sizeof *e);
    if (!e) return GS_ENOMEM;
    sp->entries = e;
    sp->cap = cap;
  }
  sp->entries[sp->count].id = id;
  sp->entries[sp->count].bytes = bytes;
  sp->count++;
  return GS_OK;
}

static int on_file(void *ctx, const char *name, uint64_t size) {
  list_ctx *l = ctx;
  int tmp = 0;
  uint64_t id = spool_parse_name(name, &tmp);
  if (!id) return GS_OK;                  /* not ours: left alone */
  if (!tmp) return spool_add(l->sp, id, size);
  if (l->remove_tmp) {
    char *p = spool_path(l->sp, id, 1);
    if (p) gs_port_remove(p);
    free(p);
  }
  return GS_OK;
}

static int entry_cmp(const void *a, const void *b) {
  const spool_entry *x = a, *y = b;
  return x->id < y->id ? -1 : x->id > y->id;
}

/* Lists the spooled snapshots into sp->entries, oldest first. */
static int spool_list(gs_spool *sp, int remove_tmp) {
  list_ctx l;
  int rc;
  l.sp = sp;
  l.remove_tmp = remove_tmp;
  sp->count = 0;
  if ((rc = gs_port_list_dir(sp->dir, on_file, &l)))
    return spool_fail(sp, rc, "cannot read the spool folder '%s': %s", sp->dir,
                      rc == GS_ENOMEM ? "out of memory" : gs_port_error_text());
  if (sp->count > 1) qsort(sp->entries, sp->count, sizeof *sp->entries, entry_cmp);
  return GS_OK;
}

int gs_spool_usage(gs_spool *sp, unsigned *files, uint64_t *bytes) {
  size_t i;
  int rc = spool_list(sp, 0);
  *files = 0;
  *bytes = 0;
  if (rc) return rc;
  *files = (unsigned)sp->count;
  for (i = 0; i < sp->count; i++) *bytes += sp->entries[i].bytes;
  return GS_OK;
}

uint64_t gs_spool_last_id(gs_spool *sp) {
  if (spool_list(sp, 0) || sp->count == 0) return 0;
  return sp->entries[sp->count - 1].id;
}

/* ---- opening ---- */

int gs_spool_open(gs_spool **out, const char *dir, unsigned max_files, uint64_t max_bytes,
                  char *err, size_t errcap) {
  gs_spool *sp = calloc(1, sizeof *sp);
  size_t len = strlen(dir);
  int rc;
  *out = NULL;
  if (!sp || !(sp->dir = malloc(len + 1))) {
    free(sp);
    snprintf(err, errcap, "out of memory");
    return GS_ENOMEM;
  }
  memcpy(sp->dir, dir, len + 1);
  while (len > 1 && (sp->dir[len - 1] == '/' || sp->dir[len - 1] == '\\')) sp->dir[--len] = '\0';
  sp->max_files = max_files ? max_files : 1;
  sp->max_bytes = max_bytes;
  if (gs_port_make_dir(sp->dir)) {
    snprintf(err, errcap, "cannot create the spool folder '%s': %s", sp->dir,
             gs_port_error_text());
    gs_spool_close(sp);
    return GS_EIO;
  }
  if ((rc = spool_list(sp, 1))) {
    snprintf(err, errcap, "%s", sp->error);
    gs_spool_close(sp);
    return rc;
  }
  *out = sp;
  return GS_OK;
}

void gs_spool_close(gs_spool *sp) {
  if (!sp) return;
  gs_spool_abort(sp);
  free(sp->entries);
  free(sp->dir);
  free(sp);
}

/* ---- headers ---- */

/* Reads the header of the file open in f: the ID, the trigger and the
 * header's length. GS_EFORMAT when it is not a spooled snapshot's. */
static int spool_read_header(gs_port_file *f, uint64_t *id, char *trigger, size_t cap,
                             size_t *header_len, uint8_t *buf, size_t bufcap, size_t *got) {
  const char *nl;
  char line[SPOOL_HEADER_MAX + 1];
  unsigned format;
  unsigned long long v;
  int used = 0;
  size_t len;
  if (gs_port_file_read(f, buf, bufcap, got)) return GS_EIO;
  nl = memchr(buf, '\n', *got < SPOOL_HEADER_MAX ? *got : SPOOL_HEADER_MAX);
  if (!nl) return GS_EFORMAT;
  len = (size_t)(nl - (const char *)buf);
  memcpy(line, buf, len);
  line[len] = '\0';
  if (sscanf(line, GS_SPOOL_MAGIC " %u %llu %n", &format, &v, &used) != 2 || !used ||
      format != GS_SPOOL_FORMAT)
    return GS_EFORMAT;
  *id = v;
  if (trigger) snprintf(trigger, cap, "%s", line + used);
  *header_len = len + 1;
  return GS_OK;
}

/* ---- writing ---- */

int gs_spool_begin(gs_spool *sp, uint64_t snapshot_id, const char *trigger) {
  char header[SPOOL_HEADER_MAX];
  int n, rc;
  gs_spool_abort(sp);
  n = snprintf(header, sizeof header, GS_SPOOL_MAGIC " %d %llu %.*s\n", GS_SPOOL_FORMAT,
               (unsigned long long)snapshot_id, GS_SPOOL_TRIGGER_MAX, trigger ? trigger : "");
  if (!(sp->tmp_path = spool_path(sp, snapshot_id, 1)))
    return spool_fail(sp, GS_ENOMEM, "out of memory");
  if ((rc = gs_port_file_create(&sp->f, sp->tmp_path))) {
    spool_fail(sp, rc, "cannot create '%s': %s", sp->tmp_path, gs_port_error_text());
    free(sp->tmp_path);
    sp->tmp_path = NULL;              /* not ours: never remove it */
    return rc;
  }
  gs_port_remove_on_signal(sp->tmp_path);
  sp->writing_id = snapshot_id;
  if ((rc = gs_port_file_write(sp->f, header, (size_t)n))) {
    spool_fail(sp, rc, "cannot write '%s': %s", sp->tmp_path, gs_port_error_text());
    gs_spool_abort(sp);
  }
  return rc;
}

int gs_spool_write(void *spool, const void *frame, size_t len) {
  gs_spool *sp = spool;
  int rc;
  if (!sp->f) return spool_fail(sp, GS_EIO, "no spool file open");
  if ((rc = gs_port_file_write(sp->f, frame, len)))
    return spool_fail(sp, rc, "cannot write '%s': %s", sp->tmp_path, gs_port_error_text());
  return GS_OK;
}

void gs_spool_abort(gs_spool *sp) {
  if (sp->f) {
    gs_port_file_close(sp->f);
    sp->f = NULL;
  }
  if (sp->tmp_path) {
    gs_port_remove(sp->tmp_path);
    gs_port_remove_on_signal(NULL);
    free(sp->tmp_path);
    sp->tmp_path = NULL;
  }
}

/* Logs one snapshot removed for the bound, with its trigger. */
static void spool_log_drop(gs_spool *sp, const spool_entry *e, unsigned files, uint64_t bytes) {
  char trigger[GS_SPOOL_TRIGGER_MAX + 1] = "?";
  uint8_t buf[SPOOL_HEADER_MAX];
  gs_port_file *f = NULL;
  char *path = spool_path(sp, e->id, 0);
  uint64_t id;
  size_t hl, got;
  if (path && gs_port_file_open(&f, path) == GS_OK)
    spool_read_header(f, &id, trigger, sizeof trigger, &hl, buf, sizeof buf, &got);
  gs_port_file_close(f);
  free(path);
  fprintf(stderr, AGENT_NAME ": spool full (%u snapshots, %llu bytes; bound %u, %llu):"
          " dropped the oldest, snapshot %llu (%s)\n", files, (unsigned long long)bytes,
          sp->max_files, (unsigned long long)sp->max_bytes, (unsigned long long)e->id,
          trigger);
  fflush(stderr);
}

/* Removes the oldest snapshots, never the newest, until the spool fits. */
static int spool_apply_bound(gs_spool *sp) {
  uint64_t bytes = 0;
  size_t i, first = 0;
  int rc;
  if ((rc = spool_list(sp, 0))) return rc;
  for (i = 0; i < sp->count; i++) bytes += sp->entries[i].bytes;
  while (sp->count - first > 1 &&
         (sp->count - first > sp->max_files || (sp->max_bytes && bytes > sp->max_bytes))) {
    spool_entry *e = &sp->entries[first++];
    spool_log_drop(sp, e, (unsigned)(sp->count - first + 1), bytes);
    if ((rc = gs_spool_remove(sp, e->id))) return rc;
    bytes -= e->bytes;
  }
  return GS_OK;
}

int gs_spool_commit(gs_spool *sp) {
  char *path;
  int rc;
  if (!sp->f) return spool_fail(sp, GS_EIO, "no spool file open");
  /* Synced before the rename: after a crash the final name holds the
   * whole snapshot or nothing. */
  if (!(rc = gs_port_file_sync(sp->f))) {
    rc = gs_port_file_close(sp->f);
    sp->f = NULL;
  }
  if (rc) {
    spool_fail(sp, rc, "cannot write '%s': %s", sp->tmp_path, gs_port_error_text());
    gs_spool_abort(sp);
    return rc;
  }
  if (!(path = spool_path(sp, sp->writing_id, 0))) {
    gs_spool_abort(sp);
    return spool_fail(sp, GS_ENOMEM, "out of memory");
  }
  if ((rc = gs_port_rename(sp->tmp_path, path))) {
    spool_fail(sp, rc, "cannot rename '%s' to '%s': %s", sp->tmp_path, path,
               gs_port_error_text());
    free(path);
    gs_spool_abort(sp);
    return rc;
  }
  free(path);
  gs_port_remove_on_signal(NULL);
  free(sp->tmp_path);
  sp->tmp_path = NULL;
  return spool_apply_bound(sp);
}

/* ---- forwarding ---- */

int gs_spool_oldest(gs_spool *sp, uint64_t *snapshot_id, char *trigger, size_t trigger_cap,
                    uint64_t *bytes) {
  uint8_t buf[SPOOL_HEADER_MAX];
  gs_port_file *f = NULL;
  char *path;
  uint64_t id = 0;
  size_t hl, got;
  int rc;
  if ((rc = spool_list(sp, 0))) return rc;
  if (sp->count == 0) return GS_EOF;
  *snapshot_id = sp->entries[0].id;
  *bytes = sp->entries[0].bytes;
  if (trigger_cap) trigger[0] = '\0';
  if (!(path = spool_path(sp, *snapshot_id, 0))) return spool_fail(sp, GS_ENOMEM, "out of memory");
  rc = gs_port_file_open(&f, path);
  if (rc == GS_OK)
    rc = spool_read_header(f, &id, trigger, trigger_cap, &hl, buf, sizeof buf, &got);
  gs_port_file_close(f);
  if (rc == GS_OK && id != *snapshot_id) rc = GS_EFORMAT;
  if (rc == GS_EFORMAT) spool_fail(sp, rc, "'%s' is not a spooled snapshot", path);
  else if (rc) spool_fail(sp, rc, "cannot read '%s': %s", path, gs_port_error_text());
  free(path);
  return rc;
}

int gs_spool_send(gs_spool *sp, uint64_t snapshot_id, gs_wire_frame_fn send, void *ctx) {
  gs_port_file *f = NULL;
  uint8_t *buf = malloc(SPOOL_CHUNK);
  char *path = spool_path(sp, snapshot_id, 0);
  uint64_t id;
  size_t hl, got;
  int rc;
  if (!buf || !path) {
    rc = spool_fail(sp, GS_ENOMEM, "out of memory");
    goto done;
  }
  if ((rc = gs_port_file_open(&f, path))) {
    spool_fail(sp, rc, "cannot open '%s': %s", path, gs_port_error_text());
    goto done;
  }
  rc = spool_read_header(f, &id, NULL, 0, &hl, buf, SPOOL_CHUNK, &got);
  if (rc == GS_OK && id != snapshot_id) rc = GS_EFORMAT;
  if (rc) {
    spool_fail(sp, rc, rc == GS_EFORMAT ? "'%s' is not a spooled snapshot" : "cannot read '%s'",
               path);
    goto done;
  }
  if (got > hl && (rc = send(ctx, buf + hl, got - hl))) goto done;
  for (;;) {
    if ((rc = gs_port_file_read(f, buf, SPOOL_CHUNK, &got))) {
      spool_fail(sp, rc, "cannot read '%s': %s", path, gs_port_error_text());
      break;
    }
    if (got == 0 || (rc = send(ctx, buf, got))) break;
  }
done:
  gs_port_file_close(f);
  free(path);
  free(buf);
  return rc;
}

int gs_spool_remove(gs_spool *sp, uint64_t snapshot_id) {
  char *path = spool_path(sp, snapshot_id, 0);
  int rc = GS_OK;
  if (!path) return spool_fail(sp, GS_ENOMEM, "out of memory");
  if (gs_port_remove(path) && gs_port_path_kind_of(path) != GS_PORT_MISSING)
    rc = spool_fail(sp, GS_EIO, "cannot remove '%s': %s", path, gs_port_error_text());
  free(path);
  return rc;
}
