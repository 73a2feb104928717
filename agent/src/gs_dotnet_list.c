/* gs_dotnet_list.c - gcsnap-agent --list: the .NET programs this user can
 * capture with --source dotnet:PID, each as its runtime describes itself
 * over the diagnostics IPC (a program that does not answer is listed with
 * the reason). */
#include <stdio.h>
#include <string.h>
#include "gs_dotnet_ipc.h"
#include "gs_error.h"
#include "gs_port_dotnet.h"
#include "gs_sources.h"

typedef struct lister {
  FILE *f;
  int json;
  unsigned count;
} lister;

static void put_json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c < 0x20) fprintf(f, "\\u%04x", c);
    else fputc(c, f);
  }
  fputc('"', f);
}

static void put_json(FILE *f, unsigned long pid, const char *endpoint,
                     const gs_dipc_process *p, const char *err) {
  fprintf(f, "{\"pid\":%lu,\"endpoint\":", pid);
  put_json_string(f, endpoint);
  if (err) {
    fputs(",\"error\":", f);
    put_json_string(f, err);
  } else {
    fputs(",\"name\":", f);
    put_json_string(f, p->assembly);
    fputs(",\"runtime\":", f);
    put_json_string(f, p->version);
    fputs(",\"arch\":", f);
    put_json_string(f, p->arch);
    fputs(",\"command_line\":", f);
    put_json_string(f, p->command_line);
  }
  fputs("}\n", f);
}

static int list_one(void *ctx, unsigned long pid, const char *endpoint) {
  lister *l = ctx;
  gs_dipc_peer peer;
  gs_dipc_process p;
  char err[300];
  int rc;
  memset(&peer, 0, sizeof peer);
  snprintf(peer.endpoint, sizeof peer.endpoint, "%s", endpoint);
  rc = gs_dipc_process_info(&peer, &p, err, sizeof err);
  if (l->json) {
    put_json(l->f, pid, endpoint, &p, rc ? err : NULL);
  } else {
    if (!l->count) fprintf(l->f, "%-8s %-24s %-10s %s\n", "PID", "NAME", "RUNTIME", "COMMAND");
    if (rc) fprintf(l->f, "%-8lu %s\n", pid, err);
    else fprintf(l->f, "%-8lu %-24s %-10s %s\n", pid, *p.assembly ? p.assembly : "?",
                 *p.version ? p.version : "?", p.command_line);
  }
  l->count++;
  return 0;
}

int gs_dotnet_list(FILE *f, int json) {
  lister l;
  int rc;
  l.f = f;
  l.json = json;
  l.count = 0;
  rc = gs_port_dotnet_list(list_one, &l);
  if (!rc && !json && !l.count) fprintf(f, "no .NET program that this user can capture\n");
  fflush(f);
  return rc;
}
