/* gs_client.c - what the commands that talk to the collector share.
 *
 * Error reports name the collector's URL, since the most common failure is
 * asking the wrong one or one that is not running, and quote the API's own
 * message for refusals, which says exactly what was wrong. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gs_cli.h"
#include "gs_check.h"
#include "gs_client.h"
#include "gs_genfile.h"
#include "gs_output.h"
#include "gs_port.h"
#include "gs_error.h"
#include "gs_table.h"

/* A token is one line of visible ASCII: it goes into a header as it is. */
static int check_token(const char *token, const char *from) {
  const char *p;
  if (!*token || strlen(token) > GS_TOKEN_MAX) {
    fprintf(stderr, "gcsnap: the token in %s must be 1 to %d characters\n", from, GS_TOKEN_MAX);
    return GS_EXIT_USAGE;
  }
  for (p = token; *p; p++)
    if (*p <= ' ' || *p > '~') {
      fprintf(stderr, "gcsnap: the token in %s must be visible ASCII characters (no blanks)\n",
              from);
      return GS_EXIT_USAGE;
    }
  return GS_EXIT_OK;
}

/* The first line of path, without its line end ("" when too long). */
static int read_token(const char *path, char *token, size_t cap) {
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "gcsnap: cannot open --token-file '%s': %s\n", path, strerror(errno));
    return GS_EXIT_USAGE;
  }
  if (!fgets(token, (int)cap, f)) token[0] = '\0';
  fclose(f);
  if (strlen(token) == cap - 1 && !strchr(token, '\n')) token[0] = '\0';
  token[strcspn(token, "\r\n")] = '\0';
  return GS_EXIT_OK;
}

int gs_client_set_auth(const char *token_file, const char *cacert) {
  static char token[GS_TOKEN_MAX + 2];
  const char *env;
  int code;
  if (token_file) {
    if ((code = read_token(token_file, token, sizeof token)) != GS_EXIT_OK ||
        (code = check_token(token, token_file)) != GS_EXIT_OK)
      return code;
    gs_http_set_token(token);
  } else if ((env = getenv(GS_TOKEN_ENV)) && *env) {
    if ((code = check_token(env, "$" GS_TOKEN_ENV)) != GS_EXIT_OK) return code;
    gs_http_set_token(env);
  }
  if (cacert && !*cacert) {
    fprintf(stderr, "gcsnap: --cacert needs a file\n");
    return GS_EXIT_USAGE;
  }
  if (cacert) gs_http_set_cacert(cacert);
  return GS_EXIT_OK;
}

const char *gs_client_url(const char *option) {
  static char url[1024];
  const char *s = option;
  size_t n;
  if (!s || !*s) s = getenv(GS_COLLECTOR_ENV);
  if (!s || !*s) s = GS_DEFAULT_COLLECTOR;
  snprintf(url, sizeof url, "%s", s);
  n = strlen(url);
  while (n > 0 && url[n - 1] == '/') url[--n] = '\0';
  return url;
}

/* The first line of a body that is not JSON, for the message. */
static void body_excerpt(const gs_http_reply *r, char *buf, size_t cap) {
  size_t n = 0;
  buf[0] = '\0';
  if (!r->body) return;
  while (n < r->body_len && n + 1 < cap && n < 120 && r->body[n] != '\n' &&
         r->body[n] != '\r')
    n++;
  memcpy(buf, r->body, n);
  buf[n] = '\0';
}

static int refused(const char *cmd, const char *url, const gs_http_reply *r) {
  const char *code = gs_client_str(r->json, "error");
  const char *message = gs_client_str(r->json, "message");
  const char *reason = gs_client_str(r->json, "reason");
  char excerpt[128];
  /* What the collector says may quote an agent (a failed capture's
   * reason): escaped for the terminal like the tables. */
  if (!code || !message) {
    body_excerpt(r, excerpt, sizeof excerpt);
    fprintf(stderr, "gcsnap %s: the collector at %s answered HTTP %ld%s", cmd, url,
            r->status, excerpt[0] ? ": " : " with no error message");
    gs_table_fputs(excerpt, stderr);
    fputc('\n', stderr);
    return GS_EXIT_USAGE;
  }
  fprintf(stderr, "gcsnap %s: ", cmd);
  gs_table_fputs(message, stderr);
  if (reason && !strstr(message, reason)) {
    fputs(": ", stderr);
    gs_table_fputs(reason, stderr);
  }
  fprintf(stderr, " (HTTP %ld, ", r->status);
  gs_table_fputs(code, stderr);
  fputs(")\n", stderr);
  /* A request the collector calls malformed is a usage error like any other. */
  return r->status == 400 ? GS_EXIT_USAGE : GS_EXIT_INVALID;
}

int gs_client_check(const char *cmd, const char *url, int err, const gs_http_reply *r) {
  if (err == GS_ENOMEM) {
    fprintf(stderr, "gcsnap %s: out of memory\n", cmd);
    return GS_EXIT_USAGE;
  }
  if (err != GS_OK && r->write_failed) return GS_EXIT_USAGE;   /* reported by the caller */
  if (err != GS_OK && r->status != 0) {
    fprintf(stderr, "gcsnap %s: the transfer from the collector at %s failed: %s\n", cmd, url,
            r->error);
    return GS_EXIT_USAGE;
  }
  if (err != GS_OK) {
    fprintf(stderr, "gcsnap %s: cannot reach the collector at %s: %s\n", cmd, url, r->error);
    fprintf(stderr, "gcsnap %s: is gcsnapd running there? (--collector URL or $%s "
            "chooses another)\n", cmd, GS_COLLECTOR_ENV);
    return GS_EXIT_USAGE;
  }
  if (r->status < 200 || r->status > 299) return refused(cmd, url, r);
  if (r->body && !json_is_object(r->json)) {
    fprintf(stderr, "gcsnap %s: the collector at %s sent an answer that is not JSON "
            "(is it gcsnapd?)\n", cmd, url);
    return GS_EXIT_USAGE;
  }
  return GS_EXIT_OK;
}

uint64_t gs_client_u64(const json_t *o, const char *key) {
  json_t *v = json_object_get(o, key);
  if (json_is_integer(v) && json_integer_value(v) >= 0) return (uint64_t)json_integer_value(v);
  if (json_is_real(v) && json_real_value(v) >= 0) return (uint64_t)json_real_value(v);
  return 0;
}

const char *gs_client_str(const json_t *o, const char *key) {
  return json_string_value(json_object_get(o, key));
}

int gs_client_bool(const json_t *o, const char *key) {
  return json_is_true(json_object_get(o, key));
}

int gs_client_is_null(const json_t *o, const char *key) {
  json_t *v = json_object_get(o, key);
  return !v || json_is_null(v);
}

void gs_client_fmt_u64(char *buf, size_t cap, const json_t *o, const char *key) {
  if (gs_client_is_null(o, key)) snprintf(buf, cap, "-");
  else snprintf(buf, cap, "%llu", (unsigned long long)gs_client_u64(o, key));
}

void gs_client_fmt_time(char *buf, size_t cap, const json_t *o, const char *key) {
  time_t t;
  struct tm tm;
  if (gs_client_is_null(o, key)) { snprintf(buf, cap, "-"); return; }
  t = (time_t)gs_client_u64(o, key);
  if (!localtime_r(&t, &tm) || !strftime(buf, cap, "%Y-%m-%d %H:%M:%S", &tm))
    snprintf(buf, cap, "%llu", (unsigned long long)t);
}

void gs_client_fmt_bytes(char *buf, size_t cap, uint64_t bytes) {
  static const char *const units[] = {"KB", "MB", "GB", "TB"};
  double v = (double)bytes;
  int u = 0;
  if (bytes < 1000) { snprintf(buf, cap, "%llu B", (unsigned long long)bytes); return; }
  for (v /= 1000; v >= 1000 && u < 3; u++) v /= 1000;
  snprintf(buf, cap, "%.1f %s", v, units[u]);
}

typedef struct counted {
  gs_output *out;
  uint64_t bytes;
  gs_check *check;
} counted;

static int counted_write(void *ctx, const void *buf, size_t len) {
  counted *c = ctx;
  c->bytes += len;
  gs_check_feed(c->check, buf, len);    /* a mismatch is reported at the end */
  return gs_output_write(c->out, buf, len);
}

/* What the catalog says of snapshot id, to check the download against:
 * GS_EXIT_OK and a check, or the exit code of the failed call. */
static int check_of(const char *cmd, const char *url, uint64_t id, const char *format, gs_check **c) {
  gs_http_reply r;
  gs_check_expect e;
  char api[64];
  int code;
  snprintf(api, sizeof api, "/api/snapshots/%llu", (unsigned long long)id);
  code = gs_client_check(cmd, url, gs_http_get_json(url, api, &r), &r);
  if (code == GS_EXIT_OK) {
    e.file_bytes = gs_client_u64(r.json, "file_bytes");
    e.text_bytes = gs_client_u64(r.json, "text_bytes");
    e.crc32 = (uint32_t)gs_client_u64(r.json, "crc32");
    if (gs_check_new(c, &e, strcmp(format, "zst") == 0) != GS_OK) {
      gs_cli_error("out of memory");
      code = GS_EXIT_USAGE;
    }
  }
  gs_http_reply_free(&r);
  return code;
}

/* The side file the collector sent (r's body), into PATH.gens.json. */
static int write_gens(const char *path, const gs_http_reply *r) {
  const char *format = json_string_value(json_object_get(r->json, "format"));
  char *side = gs_genfile_path(path), msg[300];
  gs_output *out = NULL;
  int code = GS_EXIT_USAGE;
  if (!side) gs_cli_error("out of memory");
  else if (!format || strcmp(format, "gcsnap-generations/1"))
    gs_cli_error("the generation ranges the collector sent for %s are not a ranges file", path);
  else if (gs_output_open(&out, side, msg, sizeof msg)) gs_cli_error("%s", msg);
  else if (gs_output_write(out, r->body, r->body_len) || gs_output_commit(out))
    gs_cli_error("%s", gs_output_error(out));
  else code = GS_EXIT_OK;
  gs_output_close(out);
  free(side);
  return code;
}

/* The snapshot's generation ranges beside path, as the collector keeps
 * them (gs_genfile.h); without any (404, or 400 from a collector that
 * does not serve them) a side file left at that name is removed. */
static int fetch_gens(const char *cmd, const char *url, uint64_t id, const char *path) {
  gs_http_reply r;
  char api[96], msg[300];
  int err, code;
  snprintf(api, sizeof api, "/api/snapshots/%llu/download?format=gens", (unsigned long long)id);
  err = gs_http_get_json(url, api, &r);
  if (err == GS_OK && (r.status == 404 || r.status == 400)) {
    code = GS_EXIT_OK;
    if (gs_genfile_write(NULL, path, msg, sizeof msg)) { gs_cli_error("%s", msg); code = GS_EXIT_USAGE; }
  } else if ((code = gs_client_check(cmd, url, err, &r)) == GS_EXIT_OK) {
    code = write_gens(path, &r);
  }
  gs_http_reply_free(&r);
  return code;
}

int gs_client_fetch(const char *cmd, const char *url, uint64_t id, const char *format,
                    const char *path, uint64_t *bytes) {
  counted c = {NULL, 0, NULL};
  gs_http_reply r;
  char api[96], msg[300];
  int err, code;
  if ((code = check_of(cmd, url, id, format, &c.check)) != GS_EXIT_OK) return code;
  if (gs_output_open_raw(&c.out, path, msg, sizeof msg)) {
    gs_cli_error("%s", msg);
    gs_check_free(c.check);
    return GS_EXIT_USAGE;
  }
  snprintf(api, sizeof api, "/api/snapshots/%llu/download?format=%s", (unsigned long long)id, format);
  err = gs_http_download(url, api, counted_write, &c, &r);
  if (err != GS_OK && r.write_failed) gs_cli_error("%s", gs_output_error(c.out));
  code = gs_client_check(cmd, url, err, &r);
  /* A stored snapshot is never empty: an empty 200 is not the collector's. */
  if (code == GS_EXIT_OK && c.bytes == 0) {
    fprintf(stderr, "gcsnap %s: the collector at %s sent an empty snapshot\n", cmd, url);
    code = GS_EXIT_USAGE;
  }
  gs_http_reply_free(&r);
  if (code == GS_EXIT_OK && gs_check_finish(c.check) != GS_OK) {
    fprintf(stderr, "gcsnap %s: snapshot %llu is damaged in the collector's store (%s): %s is not "
            "written\n", cmd, (unsigned long long)id, gs_check_error(c.check), path);
    code = GS_EXIT_INVALID;
  }
  gs_check_free(c.check);
  if (code == GS_EXIT_OK && (err = gs_output_commit(c.out)) != GS_OK) {
    gs_cli_error("%s", gs_output_error(c.out)[0] ? gs_output_error(c.out) : gs_strerror(err));
    code = GS_EXIT_USAGE;
  }
  gs_output_close(c.out);
  *bytes = c.bytes;
  /* Standard output and devices (/dev/null) have no side file. */
  if (code == GS_EXIT_OK && gs_port_path_kind_of(path) == GS_PORT_REGULAR) code = fetch_gens(cmd, url, id, path);
  return code;
}

int gs_client_print_rows(const json_t *rows, size_t ncols, const char *const *heads,
                         const char *align, gs_client_row_fn add) {
  gs_table t;
  size_t i;
  int err = GS_OK;
  gs_table_init(&t, ncols, heads, align);
  for (i = 0; !err && i < json_array_size(rows); i++) err = add(&t, json_array_get(rows, i));
  if (!err) err = gs_table_print(&t, stdout);
  gs_table_free(&t);
  return err;
}
