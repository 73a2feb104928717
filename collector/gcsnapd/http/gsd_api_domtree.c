/* gsd_api_domtree.c - GET /api/snapshots/ID/dominators?parent=OBJ: the
 * dominator tree of a snapshot, one node's children at a time.
 *
 * The tree is computed once per snapshot, by the analysis runner (a child
 * process), and kept in STORE/trees/ID.dom; later requests map that file
 * on the loop and read only the node asked for. A tree file names the
 * stamp of its snapshot's file, so one made for a removed or replaced
 * snapshot is never served, and the folder keeps at most MAX_TREES files
 * and MAX_TREE_BYTES bytes: the least recently used go first. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "gs_domtree.h"
#include "gs_error.h"
#include "gsd_analysis.h"
#include "gsd_api.h"
#include "gsd_child.h"
#include "gsd_request.h"
#include "gsd_respond.h"

#define MAX_TREES 64
#define MAX_TREE_BYTES (4ull << 30)
#define MAX_PAGE 1000u
#define STALE_TMP_S 3600

/* ---- the folder's bound (in the child, after a tree is written) -------- */

typedef struct tree_file { char name[64]; time_t used; uint64_t bytes; } tree_file;

static int oldest_first(const void *a, const void *b) {
  const tree_file *x = a, *y = b;
  return x->used < y->used ? -1 : x->used > y->used;
}

/* The .dom files of dir (at most cap); temporary files of builds that
 * died long ago are removed on the way. */
static size_t list_trees(DIR *d, tree_file *files, size_t cap) {
  struct dirent *e;
  struct stat st;
  size_t n = 0, len;
  while ((e = readdir(d)) && n < cap) {
    len = strlen(e->d_name);
    if (len >= sizeof files[0].name || fstatat(dirfd(d), e->d_name, &st, 0) != 0) continue;
    if (len > 4 && !strcmp(e->d_name + len - 4, ".tmp") && st.st_mtime + STALE_TMP_S < time(NULL))
      unlinkat(dirfd(d), e->d_name, 0);
    if (len < 5 || strcmp(e->d_name + len - 4, ".dom")) continue;
    memcpy(files[n].name, e->d_name, len + 1);
    files[n].used = st.st_mtime;
    files[n].bytes = (uint64_t)st.st_blocks * 512;
    n++;
  }
  return n;
}

static void bound_trees(const char *dir, const char *keep) {
  enum { CAP = 4096 };
  tree_file *files = malloc(CAP * sizeof *files);
  uint64_t total = 0;
  size_t n, i, left;
  DIR *d = opendir(dir);
  if (!d || !files) { if (d) closedir(d); free(files); return; }
  n = list_trees(d, files, CAP);
  qsort(files, n, sizeof *files, oldest_first);
  for (i = 0; i < n; i++) total += files[i].bytes;
  for (i = 0, left = n; i < n && (left > MAX_TREES || total > MAX_TREE_BYTES); i++) {
    if (!strcmp(files[i].name, keep)) continue;
    unlinkat(dirfd(d), files[i].name, 0);
    total -= files[i].bytes;
    left--;
  }
  closedir(d);
  free(files);
}

/* ---- the answer ---------------------------------------------------------- */

/* Answers q from the tree file at path; GS_EOF when it is absent or stale. */
static int from_file(const char *path, gs_domtree_stamp stamp, const gs_domtree_query *q,
                     json_t **answer, char *why, size_t cap) {
  gs_domtree *t;
  int err = gs_domtree_open(path, stamp, &t);
  if (err == GS_EFORMAT) snprintf(why, cap, "%s: not a whole tree file", path);
  if (err != GS_OK) return err;
  err = gs_domtree_children(t, q, answer, why, cap);
  if (err == GS_EFORMAT) snprintf(why, cap, "%s: the tree file is damaged", path);
  gs_domtree_close(t);
  if (err == GS_OK) utimensat(AT_FDCWD, path, NULL, 0);   /* used: last to go */
  return err;
}

int gsd_domtree_compute(const gsd_analysis *a, json_t **answer, char *why, size_t cap) {
  gs_domtree_stamp stamp;
  gs_file_fault fault;
  const char *slash = strrchr(a->cache, '/');
  char dir[1024];
  int err;
  if (gs_domtree_stamp_of(a->files[0], &stamp)) {
    snprintf(why, cap, "%s: %s", a->files[0], strerror(errno));
    return GSD_CHILD_FAILED;
  }
  if (gs_domtree_write(a->files[0], a->cache, stamp, &fault) != GS_OK)
    return gsd_child_fault(&fault, why, cap);
  snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - a->cache) : 1, slash ? a->cache : ".");
  bound_trees(dir, slash ? slash + 1 : a->cache);
  err = from_file(a->cache, stamp, &a->tree, answer, why, cap);
  return err == GS_OK ? GSD_CHILD_OK : err == GS_EINVAL ? GSD_CHILD_WANTING : GSD_CHILD_FAILED;
}

/* ---- the request ---------------------------------------------------------- */

static int query_of(h2o_req_t *req, gs_domtree_query *q) {
  char parent[32], text[16];
  uint64_t v;
  char *end;
  memset(q, 0, sizeof q[0]);
  if (gsd_query_get(req, "parent", parent, sizeof parent) != 1) return -1;
  q->root = !strcmp(parent, "root");
  if (!q->root) {
    const char *s = parent + (parent[0] == '0' && (parent[1] == 'x' || parent[1] == 'X') ? 2 : 0);
    if (!*s || strspn(s, "0123456789abcdefABCDEF") != strlen(s) || strlen(s) > 16) return -1;
    q->parent = strtoull(s, &end, 16);
  }
  if (gsd_query_count(req, "section", "0", text, sizeof text) || gsd_request_u64(text, UINT32_MAX, &v))
    return -1;
  q->section = (uint32_t)v;
  if (gsd_query_flag(req, "by_type", &q->by_type)) return -1;
  if (gsd_query_count(req, "offset", "0", text, sizeof text) ||
      gsd_request_u64(text, UINT32_MAX, &q->offset))
    return -1;
  if (gsd_query_count(req, "limit", "50", text, sizeof text) ||
      gsd_request_u64(text, MAX_PAGE, &q->limit) || q->limit == 0)
    return -1;
  return 0;
}

/* STORE/trees/ID.dom, the folder made if needed; NULL when out of memory. */
static char *tree_path(gsd_server *srv, const char *id_text) {
  size_t n = strlen(srv->cfg->store) + strlen(id_text) + 16;
  char *path = malloc(n);
  int64_t id;
  if (!path || gsd_request_id(id_text, &id)) { free(path); return NULL; }
  snprintf(path, n, "%s/trees", srv->cfg->store);
  if (mkdir(path, 0700) != 0 && errno != EEXIST) { free(path); return NULL; }
  snprintf(path, n, "%s/trees/%" PRId64 ".dom", srv->cfg->store, id);
  return path;
}

static int respond(h2o_req_t *req, int err, json_t *answer, const char *why) {
  if (err == GS_OK) return gsd_respond_json(req, 200, answer);
  if (err == GS_EINVAL) return gsd_respond_error(req, 422, "bad_request", "%s", why);
  return gsd_respond_error(req, 500, "internal", "%s", why[0] ? why : gs_strerror(err));
}

int gsd_api_domtree(gsd_server *srv, h2o_req_t *req, const char *id_text) {
  gs_domtree_query q;
  gs_domtree_stamp stamp;
  gsd_analysis *a;
  json_t *answer = NULL;
  char *file, *cache, why[256] = "";
  int err;
  if (query_of(req, &q))
    return gsd_respond_error(req, 400, "bad_request", "parent takes root or a hex object ID; section "
                             "and offset counts; limit 1 to %u; by_type 1 or 0", MAX_PAGE);
  if (!(file = gsd_api_snapshot_file(srv, req, id_text))) return 0;
  if (!(cache = tree_path(srv, id_text)) || gs_domtree_stamp_of(file, &stamp)) {
    free(file);
    free(cache);
    return gsd_respond_error(req, 500, "internal", "cannot reach the tree of snapshot %s: %s", id_text,
                             strerror(errno));
  }
  if ((err = from_file(cache, stamp, &q, &answer, why, sizeof why)) != GS_EOF) {
    free(file);
    free(cache);
    return respond(req, err, answer, why);
  }
  if (!(a = gsd_analysis_new(GSD_ANALYSIS_DOMTREE))) {
    free(file);
    free(cache);
    return gsd_respond_error(req, 500, "internal", "out of memory");
  }
  a->files[a->nfiles++] = file;
  a->cache = cache;
  a->tree = q;
  return gsd_analysis_run(srv, req, a);
}
