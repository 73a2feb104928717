/* gs_report_data.c - the analyses "gcsnap report" embeds: each command's
 * JSON object, gathered under one key apiece, so that the page's numbers are
 * the numbers the commands print with --json. */
#include "gs_cli.h"
#include "gs_diff.h"
#include "gs_dominators.h"
#include "gs_domtree.h"
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
  if (gs_trend_analyse(&t, ra->paths, ra->npaths, SUSPECTS_THRESHOLD, SUSPECTS_TOP, &fault))
    code = gs_cli_fault(&fault);
  else
    code = put_json(data, "trend", gs_trend_json(&t));
  gs_trend_free(&t);
  return code;
}

/* The breakdown by generation when FILE.gens.json lies beside FILE. */
static int put_generations_json(const char *path, json_t *data) {
  gs_file_fault fault;
  json_t *o;
  if (gs_gens_beside(path, 5, &o, &fault)) return gs_cli_fault(&fault);
  return o ? put_json(data, "generations", o) : GS_EXIT_OK;
}

int gs_report_collect(const report_args *ra, json_t *data) {
  gs_file_fault fault;
  gs_summary sum, old;
  json_t *o = NULL;
  int code = gs_cli_load_summary(ra->path, &sum), have_old = 0;
  if (!code) code = put_json(data, "summary", gs_summary_json(&sum, 0));
  if (!code && gs_dominators_json(ra->path, RETAINERS_TOP, 1, &o, &fault)) code = gs_cli_fault(&fault);
  else if (!code) code = put_json(data, "dominators", o);
  if (!code && gs_domtree_nested(ra->path, TREE_DEPTH, TREE_FANOUT, &o, &fault)) code = gs_cli_fault(&fault);
  else if (!code) code = put_json(data, "tree", o);
  if (!code) code = put_generations_json(ra->path, data);
  if (!code && ra->baseline) {
    have_old = 1;
    if ((code = gs_cli_load_summary(ra->baseline, &old)) == GS_EXIT_OK)
      code = put_json(data, "diff", gs_diff_json(&old, &sum, 0, 0));
    if (!code && gs_gens_diff(json_object_get(data, "diff"), ra->baseline, ra->path, &fault)) code = gs_cli_fault(&fault);
  }
  if (!code && ra->series) code = put_trend_json(ra, data);
  if (have_old) gs_summary_free(&old);
  gs_summary_free(&sum);
  return code;
}
