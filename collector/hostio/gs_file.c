/* gs_file.c - input files of every command: plain dumps, or compressed by
 * zstd or gzip.
 *
 * The first four bytes are read at open to look for either magic; they are
 * then served again, either as the start of the plain text or as the first
 * compressed input. Decompression runs straight into the reader's buffer, so
 * the only extra memory is the decompressor's input block and window.
 *
 * The analyses build the graph. A V8 or .gcdump converter holds a table of
 * the whole heap until its last records; for them the file is converted
 * whole into an unlinked temporary file first, then read as a plain dump,
 * so the converter's tables are gone before the graph grows (on a V8 heap
 * of 12.7M nodes, `gcsnap dominators` peaked at 984 MiB streamed and 633
 * spooled, for 5 to 10% more time). */
#include <errno.h>
#include <fcntl.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include "gs_error.h"
#include "gs_file.h"
#include "gs_progress.h"
#include "gsf_source.h"

/* Compressed or converted inputs smaller than this are done before a
 * thread would pay off (for plain records, see GS_READER_AHEAD_MIN_BYTES). */
#define PARSE_AHEAD_MIN_BYTES (1u << 20)

#define MAGIC_LEN 4
static const unsigned char zstd_magic[MAGIC_LEN] = {0x28, 0xb5, 0x2f, 0xfd};
static const unsigned char gzip_magic[2] = {0x1f, 0x8b};
#define GZIP_BLOCK (64u << 10)
#define SPOOL_BLOCK (256u << 10)

struct gs_file {
  const char *name;
  int fd;
  int owns_fd;
  uint64_t size;
  uint64_t consumed;
  unsigned char peek[MAGIC_LEN];
  size_t peek_len, peek_pos;
  int raw_eof;
  /* zstd */
  int zstd;
  ZSTD_DStream *dstream;
  unsigned char *zbuf;
  size_t zbuf_cap;
  ZSTD_inBuffer in;
  int frame_open;        /* the last call ended inside a frame */
  int output_full;       /* the last call filled its output: more may be pending */
  /* gzip: one member or several back to back (the JDK writes a dump as many) */
  int gzip;
  z_stream gz;
  int member_done;       /* the last member ended: the file may end here */
  uint64_t member_at;    /* file offset where the current member starts */
  gs_progress progress;
  gsf_source *src;       /* the records: these bytes, or a foreign file converted */
  int spool_fd;          /* the records converted whole, or -1 */
  int spooled;           /* read from spool_fd: all converted without error */
  uint64_t spool_size;
  /* a compressed dump's text once more, for a validator that reads a
   * section again (again_read_at) */
  gs_file *again;
  uint64_t again_pos;    /* bytes of text it has given */
  int positional;        /* this is such a second reading: pread from raw_at */
  uint64_t raw_at;
  char error[256];
};

static int fail(gs_file *f, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(f->error, sizeof f->error, fmt, ap);
  va_end(ap);
  return GS_EIO;
}

/* ---- raw bytes ------------------------------------------------------- */

static int read_fd(gs_file *f, int fd, void *buf, size_t cap, size_t *got) {
  for (;;) {
    ssize_t n = f->positional ? pread(fd, buf, cap, (off_t)f->raw_at) : read(fd, buf, cap);
    if (n >= 0) {
      *got = (size_t)n;
      f->raw_at += (uint64_t)n;
      return GS_OK;
    }
    if (errno != EINTR) return fail(f, "read error: %s", strerror(errno));
  }
}

static gs_file_read_fn read_hook;

void gs_file_on_read(gs_file_read_fn fn) { read_hook = fn; }

/* Raw file bytes: the peeked ones first, then the descriptor. */
static int raw_read(gs_file *f, void *buf, size_t cap, size_t *got) {
  int err;
  if (f->peek_pos < f->peek_len) {
    size_t n = f->peek_len - f->peek_pos;
    if (n > cap) n = cap;
    memcpy(buf, f->peek + f->peek_pos, n);
    f->peek_pos += n;
    *got = n;
    return GS_OK;
  }
  if (f->raw_eof) { *got = 0; return GS_OK; }
  if ((err = read_fd(f, f->fd, buf, cap, got))) return err;
  if (*got == 0) f->raw_eof = 1;
  f->consumed += *got;
  if (f->positional) return GS_OK;
  gs_progress_update(&f->progress, f->consumed);
  if (read_hook) read_hook(0, f->consumed, f->size);
  return GS_OK;
}

/* Fills the peek buffer; short reads happen on pipes. */
static int read_peek(gs_file *f) {
  while (f->peek_len < MAGIC_LEN && !f->raw_eof) {
    size_t got = 0;
    int err = read_fd(f, f->fd, f->peek + f->peek_len, MAGIC_LEN - f->peek_len, &got);
    if (err) return err;
    if (got == 0) f->raw_eof = 1;
    f->peek_len += got;
    f->consumed += got;
  }
  return GS_OK;
}

/* ---- zstd ------------------------------------------------------------ */

static int zstd_start(gs_file *f) {
  f->zstd = 1;
  f->dstream = ZSTD_createDStream();
  f->zbuf_cap = ZSTD_DStreamInSize();
  f->zbuf = malloc(f->zbuf_cap);
  if (!f->dstream || !f->zbuf) return GS_ENOMEM;
  ZSTD_initDStream(f->dstream);
  f->in.src = f->zbuf;
  return GS_OK;
}

/* Gets more compressed input; sets *eof when the file has none left. */
static int zstd_refill(gs_file *f, int *eof) {
  size_t got;
  int err = raw_read(f, f->zbuf, f->zbuf_cap, &got);
  if (err) return err;
  f->in.size = got;
  f->in.pos = 0;
  *eof = got == 0;
  return GS_OK;
}

static int zstd_read(gs_file *f, void *buf, size_t cap, size_t *got) {
  ZSTD_outBuffer out = {buf, cap, 0};
  while (out.pos == 0) {
    size_t ret;
    /* With the input used up, zstd may still hold output that did not fit
     * last time; only read more when it has nothing left to give. */
    if (f->in.pos == f->in.size && !f->output_full) {
      int eof, err = zstd_refill(f, &eof);
      if (err) return err;
      if (eof) break;
    }
    ret = ZSTD_decompressStream(f->dstream, &out, &f->in);
    if (ZSTD_isError(ret))
      return fail(f, "bad zstd data: %s", ZSTD_getErrorName(ret));
    f->frame_open = ret != 0;
    f->output_full = out.pos == out.size;
  }
  if (out.pos == 0 && f->frame_open)
    return fail(f, "bad zstd data: the input ends inside a frame (truncated file?)");
  *got = out.pos;
  return GS_OK;
}

/* ---- gzip ------------------------------------------------------------ */

static int gzip_start(gs_file *f) {
  f->gzip = 1;
  f->zbuf_cap = GZIP_BLOCK;
  if (!(f->zbuf = malloc(f->zbuf_cap))) return GS_ENOMEM;
  /* Only gzip's framing (16 +), with the largest window. */
  if (inflateInit2(&f->gz, 16 + MAX_WBITS) != Z_OK) {
    f->gzip = 0;
    return GS_ENOMEM;
  }
  return GS_OK;
}

/* Compressed input for inflate, when it has used up what it had; sets *eof
 * when the file has none left. */
static int gzip_refill(gs_file *f, int *eof) {
  size_t got = 0;
  int err = f->gz.avail_in ? GS_OK : raw_read(f, f->zbuf, f->zbuf_cap, &got);
  if (!err && !f->gz.avail_in) {
    f->gz.next_in = f->zbuf;
    f->gz.avail_in = (uInt)got;
  }
  *eof = !err && f->gz.avail_in == 0;
  return err;
}

static int gzip_fail(gs_file *f, const char *why) {
  return fail(f, "bad gzip data in the member at byte %llu: %s", (unsigned long long)f->member_at, why);
}

/* A member's end starts the next one if more input follows. */
static int gzip_read(gs_file *f, void *buf, size_t cap, size_t *got) {
  uInt want = cap > UINT32_MAX ? UINT32_MAX : (uInt)cap;
  f->gz.next_out = buf;
  f->gz.avail_out = want;
  while (f->gz.avail_out == want) {
    int eof, ret, err = gzip_refill(f, &eof);
    if (err) return err;
    if (eof) break;
    if (f->member_done) {
      if (inflateReset(&f->gz) != Z_OK) return GS_ENOMEM;
      f->member_at = f->consumed - f->gz.avail_in;
      f->member_done = 0;
    }
    ret = inflate(&f->gz, Z_NO_FLUSH);
    if (ret == Z_STREAM_END) f->member_done = 1;
    else if (ret == Z_MEM_ERROR) return GS_ENOMEM;
    /* Z_BUF_ERROR with input left would be no progress: stop rather than loop. */
    else if (ret != Z_OK && (ret != Z_BUF_ERROR || f->gz.avail_in))
      return gzip_fail(f, f->gz.msg ? f->gz.msg : "not deflate data");
  }
  *got = want - f->gz.avail_out;
  if (*got == 0 && !f->member_done)
    return gzip_fail(f, "the input ends inside a member (truncated file?)");
  return GS_OK;
}

/* ---- public ---------------------------------------------------------- */

/* The decompressed bytes of the file. */
static int content_read(void *ctx, void *buf, size_t cap, size_t *got) {
  gs_file *f = ctx;
  if (cap == 0) { *got = 0; return GS_OK; }
  if (f->zstd) return zstd_read(f, buf, cap, got);
  return f->gzip ? gzip_read(f, buf, cap, got) : raw_read(f, buf, cap, got);
}

/* ---- spooling ------------------------------------------------------- */

static int spool_write(gs_file *f, const unsigned char *p, size_t len) {
  while (len) {
    ssize_t n = write(f->spool_fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      return fail(f, "cannot write the converted records to a temporary file: %s (TMPDIR names "
                  "where they go)", strerror(errno));
    p += n;
    len -= (size_t)n;
  }
  return GS_OK;
}

/* Every converted record into the temporary file, which then stands for
 * the input: a plain dump of known size. Without a temporary file (no
 * TMPDIR to write in) the records stream as they are converted. */
static int spool_all(gs_file *f) {
  unsigned char *buf = malloc(SPOOL_BLOCK);
  struct stat st;
  size_t got;
  int err;
  if (!buf) return GS_ENOMEM;
  while (!(err = gsf_source_read(f->src, buf, SPOOL_BLOCK, &got)) && got)
    if ((err = spool_write(f, buf, got))) break;
  free(buf);
  if (err) return err;
  if (fstat(f->spool_fd, &st) != 0 || lseek(f->spool_fd, 0, SEEK_SET) != 0)
    return fail(f, "cannot read the converted records again: %s", strerror(errno));
  f->spooled = 1;
  f->spool_size = (uint64_t)st.st_size;
#if defined(__GLIBC__)
  /* Each table the converter freed raised glibc's mmap threshold to its
   * size, so the graph's arrays would come from the heap and stay resident
   * once freed (17 MiB more at the peak of dominators on a V8 heap of 12.7M
   * nodes): a fixed threshold gives each one its own mapping again. */
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
  return GS_OK;
}

static int spool(gs_file *f) {
  const char *dir = getenv("TMPDIR");
  char path[4096];
  if (!gsf_format_holds_heap(gsf_source_format(f->src))) return GS_OK;
  snprintf(path, sizeof path, "%s/gcsnap-XXXXXX", dir && *dir ? dir : "/tmp");
  if ((f->spool_fd = mkstemp(path)) < 0) return GS_OK;
  unlink(path);
  return spool_all(f);
}

int gs_file_read(void *ctx, void *buf, size_t cap, size_t *got) {
  gs_file *f = ctx;
  if (f->spooled) return read_fd(f, f->spool_fd, buf, cap, got);
  return gsf_source_read(f->src, buf, cap, got);
}

static int open_fd(gs_file *f, const char *path, char *err, size_t cap) {
  struct stat st;
  if (strcmp(path, "-") == 0) {
    f->fd = STDIN_FILENO;
  } else if ((f->fd = open(path, O_RDONLY)) < 0) {
    snprintf(err, cap, "cannot open '%s': %s", path, strerror(errno));
    return GS_EIO;
  } else {
    f->owns_fd = 1;
  }
  if (fstat(f->fd, &st) != 0) {
    snprintf(err, cap, "cannot read '%s': %s", f->name, strerror(errno));
    return GS_EIO;
  }
  if (S_ISDIR(st.st_mode)) {
    snprintf(err, cap, "cannot read '%s': %s", f->name, strerror(EISDIR));
    return GS_EIO;
  }
  f->size = S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
  return GS_OK;
}

/* Switches to decompression when the peeked bytes are a magic; they become
 * the first compressed input. */
static int detect_compression(gs_file *f) {
  int err;
  if (f->peek_len == MAGIC_LEN && memcmp(f->peek, zstd_magic, MAGIC_LEN) == 0) {
    if ((err = zstd_start(f))) return err;
    f->in.size = f->peek_len;
  } else if (f->peek_len >= sizeof gzip_magic && memcmp(f->peek, gzip_magic, sizeof gzip_magic) == 0) {
    if ((err = gzip_start(f))) return err;
    f->gz.next_in = f->zbuf;
    f->gz.avail_in = (uInt)f->peek_len;
  } else {
    return GS_OK;
  }
  memcpy(f->zbuf, f->peek, f->peek_len);
  f->peek_pos = f->peek_len;
  return GS_OK;
}

static size_t max_refs = GS_READER_DEFAULT_MAX_REFS;

void gs_file_set_max_refs(size_t n) { max_refs = n; }
size_t gs_file_max_refs(void) { return max_refs; }

int gs_file_open(gs_file **out, const char *path, char *err, size_t cap) {
  gs_file *f = calloc(1, sizeof *f);
  int rc;
  *out = NULL;
  if (!f) { snprintf(err, cap, "out of memory"); return GS_ENOMEM; }
  f->fd = -1;
  f->spool_fd = -1;
  f->name = gs_file_display_name(path);
  if ((rc = open_fd(f, path, err, cap)) != GS_OK) goto failed;
  if (read_hook) read_hook(1, 0, f->size);
  if ((rc = read_peek(f)) != GS_OK) {
    snprintf(err, cap, "%s: %s", f->name, f->error);
    goto failed;
  }
  if ((rc = detect_compression(f)) != GS_OK) {
    snprintf(err, cap, "out of memory");
    goto failed;
  }
  if ((rc = gsf_source_open(&f->src, content_read, f)) != GS_OK) {
    snprintf(err, cap, "%s: %s", f->name, f->error[0] ? f->error : gs_strerror(rc));
    goto failed;
  }
  gsf_source_set_max_refs(f->src, max_refs);
  *out = f;
  return GS_OK;
failed:
  gs_file_close(f);
  return rc;
}

static int show_notes;

void gs_file_set_notes(int on) { show_notes = on; }

void gs_file_close(gs_file *f) {
  const char *note;
  if (!f) return;
  if (show_notes && f->src && (note = gsf_source_note(f->src)))
    fprintf(stderr, "%s: warning: %s\n", f->name, note);
  gsf_source_close(f->src);
  gs_file_close(f->again);
  gs_progress_end(&f->progress);
  if (f->owns_fd) close(f->fd);
  if (f->spool_fd >= 0) close(f->spool_fd);
  ZSTD_freeDStream(f->dstream);
  if (f->gzip) inflateEnd(&f->gz);
  free(f->zbuf);
  free(f);
}

/* The text of a plain dump is the file itself, so the validator can read a
 * section again (for the lines of its dangling references). */
static int file_read_at(void *ctx, uint64_t offset, void *buf, size_t cap, size_t *got) {
  gs_file *f = ctx;
  if (sizeof(off_t) < 8 && offset > 0x7fffffffu) return GS_EINVAL;
  for (;;) {
    ssize_t n = pread(f->spooled ? f->spool_fd : f->fd, buf, cap, (off_t)offset);
    if (n >= 0) { *got = (size_t)n; return GS_OK; }
    if (errno != EINTR) return GS_EIO;
  }
}

/* The same file from its start, decompressed once more through pread, so
 * that the first reading's position is left alone. */
static int again_open(gs_file *f) {
  gs_file *g = calloc(1, sizeof *g);
  int err;
  if (!g) return GS_ENOMEM;
  g->name = f->name;
  g->fd = f->fd;
  g->spool_fd = -1;
  g->positional = 1;
  if (!(err = read_peek(g)) && !(err = detect_compression(g))) err = gsf_source_open(&g->src, content_read, g);
  if (err) {
    snprintf(f->error, sizeof f->error, "reading the file again: %.200s",
             g->error[0] ? g->error : gs_strerror(err));
    gs_file_close(g);
    return err;
  }
  f->again = g;
  f->again_pos = 0;
  return GS_OK;
}

/* A compressed dump is read again by decompressing it once more: the
 * validator reads a section again only for the lines of its dangling
 * references, front to back, so this is rare and mostly goes forward.
 * Going back starts over. */
static int again_read_at(void *ctx, uint64_t offset, void *buf, size_t cap, size_t *got) {
  gs_file *f = ctx;
  int err = GS_OK;
  if (f->again && offset < f->again_pos) {
    gs_file_close(f->again);
    f->again = NULL;
  }
  if (!f->again && (err = again_open(f))) return err;
  *got = 0;
  while (!err && f->again_pos < offset && cap) {
    uint64_t skip = offset - f->again_pos;
    err = gs_file_read(f->again, buf, skip < cap ? (size_t)skip : cap, got);
    if (!err && !*got) return GS_OK;           /* the text ends before offset */
    f->again_pos += *got;
  }
  if (!err) err = gs_file_read(f->again, buf, cap, got);
  if (!err) f->again_pos += *got;
  else snprintf(f->error, sizeof f->error, "reading the file again: %.200s", f->again->error);
  return err;
}

int gs_file_new_reader(gs_file *f, gs_reader **r) {
  size_t got;
  int plain = f->spooled || (!f->zstd && !f->gzip && gsf_source_format(f->src) == GSF_RECORDS);
  uint64_t size = f->spooled ? f->spool_size : f->size;
  int err = gs_reader_new(r, gs_file_read, f);
  if (err) return err;
  gs_reader_set_max_refs(*r, max_refs);
  /* As far as its end: a 32-bit off_t may not reach it. */
  if (size && file_read_at(f, size, &got, 0, &got) == GS_OK) {
    if (plain) gs_reader_set_read_at(*r, file_read_at, f);
    else if ((f->zstd || f->gzip) && gsf_source_format(f->src) == GSF_RECORDS)
      gs_reader_set_read_at(*r, again_read_at, f);
  }
  /* The hint sizes the consumers' tables. Compressed, the text is larger than
   * the file, but an underestimate only costs a few table doublings. */
  gs_reader_set_size_hint(*r, size);
  /* From here on the file is read (and decompressed) on the reader's own
   * thread, which parses while this one validates or builds the graph. */
  if (size >= (plain ? GS_READER_AHEAD_MIN_BYTES : PARSE_AHEAD_MIN_BYTES))
    gs_reader_start_thread(*r);
  return GS_OK;
}

const char *gs_file_display_name(const char *path) {
  return strcmp(path, "-") == 0 ? GS_FILE_STDIN_NAME : path;
}

const char *gs_file_name(const gs_file *f) { return f->name; }
const char *gs_file_error(const gs_file *f) { return f->error; }
const gs_diag *gs_file_diag(const gs_file *f) { return gsf_source_diag(f->src); }
const char *gs_file_format(const gs_file *f) {
  return gsf_format_name(gsf_source_format(f->src));
}
uint64_t gs_file_size(const gs_file *f) { return f->size; }
uint64_t gs_file_consumed(const gs_file *f) { return f->consumed; }

void gs_file_show_progress(gs_file *f) {
  gs_progress_start(&f->progress, f->name, f->size);
  gs_progress_update(&f->progress, f->consumed);
}

void gs_file_hide_progress(gs_file *f) { gs_progress_hide(&f->progress); }

/* ---- dumps --------------------------------------------------------- */

static int show_progress;

void gs_file_set_progress(int on) { show_progress = on; }

int gs_file_fault_text(gs_file_fault *fault, const char *file, int err, const char *text) {
  memset(fault, 0, sizeof *fault);
  fault->err = err;
  snprintf(fault->file, sizeof fault->file, "%s", file ? file : "");
  snprintf(fault->text, sizeof fault->text, "%s", text ? text : gs_strerror(err));
  return err;
}

int gs_file_fault_set(gs_file_fault *fault, const gs_file *f, int err, const gs_diag *d) {
  const char *why = err == GS_EIO && f->error[0] ? f->error : gs_strerror(err);
  /* A malformed foreign file is invalid input, like a bad record. */
  if (err == GS_EIO && gs_file_diag(f)) {
    err = GS_EFORMAT;
    d = gs_file_diag(f);
  }
  gs_file_fault_text(fault, f->name, err, why);
  if (err == GS_EFORMAT && d) fault->diag = *d;
  return err;
}

static int open_dump(const char *path, int spooled, gs_file **f, gs_reader **r,
                     gs_file_fault *fault) {
  char err[300];
  int rc;
  *r = NULL;
  if ((rc = gs_file_open(f, path, err, sizeof err)) != GS_OK) {
    *f = NULL;
    return gs_file_fault_text(fault, NULL, rc, err);
  }
  if (show_progress) gs_file_show_progress(*f);
  if (spooled && (rc = spool(*f)) != GS_OK) {
    gs_file_fault_set(fault, *f, rc, NULL);
    gs_file_close(*f);
    *f = NULL;
    return rc;
  }
  if ((rc = gs_file_new_reader(*f, r)) != GS_OK) {
    gs_file_close(*f);
    *f = NULL;
    *r = NULL;
    return gs_file_fault_text(fault, NULL, rc, "out of memory");
  }
  return GS_OK;
}

int gs_file_open_dump(const char *path, gs_file **f, gs_reader **r, gs_file_fault *fault) {
  return open_dump(path, 1, f, r, fault);
}

int gs_file_open_records(const char *path, gs_file **f, gs_reader **r, gs_file_fault *fault) {
  return open_dump(path, 0, f, r, fault);
}

void gs_file_close_dump(gs_file *f, gs_reader *r) {
  gs_reader_free(r);
  gs_file_close(f);
}
