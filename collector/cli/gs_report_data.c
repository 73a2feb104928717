/* gs_report_data.c - the analyses "gcsnap report" embeds: each command's
 * JSON object, gathered under one key apiece, so that the page's numbers are
 * the numbers the commands print with --json. */
#include <string.h>
#include "gs_cli.h"
#include "gs_diff.h"
#include "gs_dominators.h"
#include "gs_domtree.h"
#include "gs_error.h"
#include "gs_file.h"
#include "gs_gens.h"
#include "gs_json.h"
#include "gs_report.h"
#include "gs_summary.h"
#include "gs_trend.h"

/* The object of an analysis into data under key, or the exit code of its
 * failure (reported). */
static int put_json(json_t *data, const char *key, json_t *o) {
  if (o && !gs_json_set(data, key, o)) return GS_EXIT_OK;
  gs_cli_error("out of memory");
  return GS_EXIT_USAGE;
}

static int put_trend_json(const report_args *ra, json_t *data) {
  gs_file_fault fault;
  gs_trend t;
  int code;
  if (gs_trend_analyse(&t, ra->paths, ra->npaths, 0, SUSPECTS_THRESHOLD, SUSPECTS_TOP, &fault))
    code = gs_cli_fault(&fault);
  else
    code = put_json(data, "trend", gs_trend_json(&t));
  gs_trend_free(&t);
  return code;
}

/* What one pass over the dump gathers, each part as its command makes it:
 * the summary, the sections of the dominators and of the top of the tree,
 * and the breakdown by generation when the ranges lie beside the dump. */
typedef struct pass {
  gs_summary sum;
  json_t *dominators, *tree;
  gs_gens *gens;
  gs_diag refused;             /* why the summary refused a section */
  int summary_refused;
} pass;

static int pass_section(void *ctx, const gs_dominators *s, size_t index) {
  pass *p = ctx;
  int err = gs_summary_add(&p->sum, s->g, &s->dom, &p->refused);
  p->summary_refused = err == GS_EFORMAT;
  if (!err && p->gens) err = gs_gens_add(p->gens, s->g);
  if (err || index >= REPORT_SECTIONS) return err;      /* counted, not detailed */
  if (json_array_append_new(p->dominators, gs_dominators_json_section(s, 1)) ||
      json_array_append_new(p->tree, gs_domtree_nest_section(s, TREE_DEPTH, TREE_FANOUT)))
    err = GS_ENOMEM;
  return err;
}

static int run_pass(const char *path, pass *p) {
  gs_file_fault fault;
  int err;
  memset(p, 0, sizeof *p);
  /* The page lists every type of the sections it details. */
  if (gs_summary_init(&p->sum, gs_file_display_name(path), 0) || !(p->dominators = json_array()) ||
      !(p->tree = json_array()))
    err = gs_file_fault_text(&fault, NULL, GS_ENOMEM, NULL);
  else if (!(err = gs_gens_start_beside(path, &p->gens, &fault)))
    err = gs_dominators_each(path, RETAINERS_TOP, 1, pass_section, p, &fault);
  if (err == GS_EFORMAT && p->summary_refused) fault.diag = p->refused;
  return err ? gs_cli_fault(&fault) : GS_EXIT_OK;
}

static void pass_free(pass *p) {
  gs_summary_free(&p->sum);
  json_decref(p->dominators);
  json_decref(p->tree);
  gs_gens_free(p->gens);
}

/* The parts of the pass into data. */
static int put_pass(const char *path, pass *p, json_t *data) {
  int code = put_json(data, "summary", gs_summary_json(&p->sum, 0, REPORT_SECTIONS));
  if (!code) code = put_json(data, "dominators", gs_dominators_json_object(path, json_incref(p->dominators)));
  if (!code) code = put_json(data, "tree", gs_domtree_nest_object(TREE_DEPTH, TREE_FANOUT, json_incref(p->tree)));
  if (!code && p->gens) code = put_json(data, "generations", gs_gens_result(p->gens, 5));
  return code;
}

/* The diff against the baseline, with the change by generation when both
 * files have their ranges. */
static int put_diff_json(const char *baseline, const pass *p, json_t *data) {
  gs_file_fault fault;
  gs_summary old;
  gs_gens *old_gens = NULL;
  int code = GS_EXIT_OK;
  if (gs_gens_load_summary(&old, baseline, 0, &old_gens, &fault)) code = gs_cli_fault(&fault);
  else code = put_json(data, "diff", gs_diff_json(&old, &p->sum, 0, 0));
  if (!code && gs_gens_diff_of(json_object_get(data, "diff"), old_gens, p->gens)) {
    gs_cli_error("out of memory");
    code = GS_EXIT_USAGE;
  }
  gs_summary_free(&old);
  gs_gens_free(old_gens);
  return code;
}

int gs_report_collect(const report_args *ra, json_t *data) {
  pass p;
  int code = run_pass(ra->path, &p);
  if (!code) code = put_pass(ra->path, &p, data);
  if (!code && ra->baseline) code = put_diff_json(ra->baseline, &p, data);
  if (!code && ra->series) code = put_trend_json(ra, data);
  pass_free(&p);
  return code;
}
