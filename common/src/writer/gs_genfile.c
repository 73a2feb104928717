/* gs_genfile.c - the side file of generation ranges and static fields'
 * names (gs_genfile.h), written by hand: the agent has no JSON library, and
 * the format is small and fixed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_array.h"
#include "gs_error.h"
#include "gs_genfile.h"
#include "gs_port.h"

typedef struct range { uint64_t section, start, used, reserved; unsigned generation; } range;

typedef struct field { uint64_t section, object; size_t name, len; } field;

struct gs_genfile {
  range r[GS_GENFILE_MAX];
  size_t n;
  uint64_t dropped, statics_dropped;
  field *fields;            /* static roots' names, in the arena names */
  size_t nfields, fields_cap;
  char *names;
  size_t names_len, names_cap;
};

char *gs_genfile_path(const char *dump) {
  size_t n = strlen(dump);
  char *p = malloc(n + sizeof ".gens.json");
  if (p) {   /* no sprintf: CE's C library lacks it */
    memcpy(p, dump, n + 1);
    memcpy(p + n, ".gens.json", sizeof ".gens.json");
  }
  return p;
}

int gs_genfile_add(gs_genfile **g, uint64_t section, unsigned generation, uint64_t start,
                   uint64_t used, uint64_t reserved) {
  range *x;
  if (!*g && !(*g = calloc(1, sizeof **g))) return GS_ENOMEM;
  if ((*g)->n == GS_GENFILE_MAX) { (*g)->dropped++; return GS_OK; }
  x = &(*g)->r[(*g)->n++];
  x->section = section;
  x->generation = generation;
  x->start = start;
  x->used = used;
  x->reserved = reserved;
  return GS_OK;
}

int gs_genfile_add_static(gs_genfile **g, uint64_t section, uint64_t object, const char *name,
                          size_t len) {
  gs_genfile *x;
  field *f;
  if (len > GS_GENFILE_NAME_MAX) len = GS_GENFILE_NAME_MAX;
  if (!*g && !(*g = calloc(1, sizeof **g))) return GS_ENOMEM;
  x = *g;
  if (x->nfields == GS_GENFILE_STATICS_MAX || x->names_len + len > GS_GENFILE_NAMES_BYTES) {
    x->statics_dropped++;
    return GS_OK;
  }
  if (gs_array_reserve((void **)&x->fields, &x->fields_cap, x->nfields + 1, sizeof *f) ||
      gs_array_reserve((void **)&x->names, &x->names_cap, x->names_len + len, 1))
    return GS_ENOMEM;
  f = &x->fields[x->nfields++];
  f->section = section;
  f->object = object;
  f->name = x->names_len;
  f->len = len;
  if (len) memcpy(x->names + x->names_len, name, len);
  x->names_len += len;
  return GS_OK;
}

/* A name as a JSON string's content (controls never reach here: the
 * sources make them '?'). */
static int put_escaped(gs_port_file *f, const char *s, size_t len) {
  size_t i, from = 0;
  int err;
  for (i = 0; i < len; i++) {
    const char *esc = s[i] == '"' ? "\\\"" : s[i] == '\\' ? "\\\\" : NULL;
    if (!esc) continue;
    if ((err = gs_port_file_write(f, s + from, i - from)) || (err = gs_port_file_write(f, esc, 2)))
      return err;
    from = i + 1;
  }
  return gs_port_file_write(f, s + from, len - from);
}

static int put_statics(const gs_genfile *g, gs_port_file *f) {
  char line[96];
  size_t i;
  int err, n;
  if (g->statics_dropped) {
    n = snprintf(line, sizeof line, ",\"statics_dropped\":%llu",
                 (unsigned long long)g->statics_dropped);
    if ((err = gs_port_file_write(f, line, (size_t)n))) return err;
  }
  if (!g->nfields) return GS_OK;
  if ((err = gs_port_file_write(f, ",\"statics\":[", 12))) return err;
  for (i = 0; i < g->nfields; i++) {
    const field *x = &g->fields[i];
    n = snprintf(line, sizeof line, "%s{\"section\":%llu,\"object\":\"%llx\",\"field\":\"",
                 i ? "," : "", (unsigned long long)x->section, (unsigned long long)x->object);
    if ((err = gs_port_file_write(f, line, (size_t)n)) ||
        (err = put_escaped(f, g->names + x->name, x->len)) ||
        (err = gs_port_file_write(f, "\"}", 2)))
      return err;
  }
  return gs_port_file_write(f, "]", 1);
}

static int put_ranges(const gs_genfile *g, gs_port_file *f) {
  char line[160];
  size_t i;
  int err, n = snprintf(line, sizeof line, "{\"format\":\"gcsnap-generations/1\",\"dropped\":%llu,\"ranges\":[",
                        (unsigned long long)g->dropped);
  if ((err = gs_port_file_write(f, line, (size_t)n))) return err;
  for (i = 0; i < g->n; i++) {
    const range *x = &g->r[i];
    n = snprintf(line, sizeof line, "%s{\"section\":%llu,\"generation\":%u,\"start\":\"%llx\",\"used\":%llu,\"reserved\":%llu}",
                 i ? "," : "", (unsigned long long)x->section, x->generation, (unsigned long long)x->start,
                 (unsigned long long)x->used, (unsigned long long)x->reserved);
    if ((err = gs_port_file_write(f, line, (size_t)n))) return err;
  }
  if ((err = gs_port_file_write(f, "]", 1)) || (err = put_statics(g, f))) return err;
  return gs_port_file_write(f, "}\n", 2);
}

/* g into tmp, made durable before it takes the side file's name; tmp is
 * removed on failure, unless it was there before (not ours). */
static int write_temp(const gs_genfile *g, const char *tmp) {
  gs_port_file *f;
  int err = gs_port_file_create(&f, tmp), closed;
  if (err) return err;
  err = put_ranges(g, f);
  if (!err) err = gs_port_file_sync(f);
  closed = gs_port_file_close(f);
  if (!err) err = closed;
  if (err) gs_port_remove(tmp);
  return err;
}

static int replace(const gs_genfile *g, const char *path, char *tmp, size_t cap) {
  int err;
  snprintf(tmp, cap, "%s.tmp.%lu", path, gs_port_pid());
  if ((err = write_temp(g, tmp))) return err;
  if ((err = gs_port_rename(tmp, path))) gs_port_remove(tmp);
  return err;
}

int gs_genfile_write(const gs_genfile *g, const char *dump, char *err, size_t errcap) {
  char *path = gs_genfile_path(dump), *tmp = path ? malloc(strlen(path) + 32) : NULL;
  int rc = GS_OK;
  if (!path || !tmp) {
    snprintf(err, errcap, "out of memory");
    rc = GS_ENOMEM;
  } else if (g && (rc = replace(g, path, tmp, strlen(path) + 32))) {
    snprintf(err, errcap, "cannot write '%s': %s", path, gs_port_error_text());
  } else if (!g && gs_port_path_kind_of(path) == GS_PORT_REGULAR && (rc = gs_port_remove(path))) {
    snprintf(err, errcap, "cannot remove '%s': %s", path, gs_port_error_text());
  }
  free(path);
  free(tmp);
  return rc;
}

void gs_genfile_free(gs_genfile *g) {
  if (!g) return;
  free(g->fields);
  free(g->names);
  free(g);
}
