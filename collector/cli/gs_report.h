/* gs_report.h - what the parts of "gcsnap report" share: its operands, the
 * shape of what it embeds, and the gathering of the analyses it shows
 * (gs_report_data.c) apart from the drawing of the page (gs_cmd_report.c). */
#ifndef GS_REPORT_H
#define GS_REPORT_H

#include <jansson.h>

#define RETAINERS_TOP 20   /* the defaults of dominators and trend */
#define TREE_DEPTH 4       /* the dominator tree embedded: levels below the roots */
#define TREE_FANOUT 8      /* and children a node, so at most 4,680 nodes a section */
#define REPORT_SECTIONS 100 /* sections the page details; its totals count them all */
#define SUSPECTS_TOP 10
#define SUSPECTS_THRESHOLD 20

typedef struct report_args {
  int help, series;
  const char *path, *baseline, *out;
  const char **paths;        /* --series: the series, FILE last */
  int npaths;
} report_args;

/* Everything the page shows, as the analysis commands' JSON objects, into
 * data: summary, dominators, tree, generations, and diff or trend when asked.
 * Returns an exit code; a failure is reported. */
int gs_report_collect(const report_args *ra, json_t *data);

#endif
