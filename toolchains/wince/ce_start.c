/* ce_start.c - the entry point of a Windows CE program: builds argc/argv for
 * main() from the command line the loader hands to WinMainCRTStartup.
 *
 * CE has no GetCommandLine and no C runtime start-up in coredll; the SDK's
 * start-up code lives in a static library this build does not use. Arguments
 * are split at blanks, double quotes group, and each becomes UTF-8. */
#include <windows.h>
#include <stdlib.h>

int main(int argc, char **argv);
int WINAPI WinMainCRTStartup(HINSTANCE self, HINSTANCE prev, LPWSTR cmd, int show);

/* A malloc'd UTF-8 copy of the n wide characters at w, or NULL. */
static char *ce_narrow(const wchar_t *w, int n) {
  int len = WideCharToMultiByte(CP_UTF8, 0, w, n, NULL, 0, NULL, NULL);
  char *s = malloc((size_t)len + 1);
  if (!s) return NULL;
  WideCharToMultiByte(CP_UTF8, 0, w, n, s, len, NULL, NULL);
  s[len] = '\0';
  return s;
}

/* Copies the next argument of *cmd into buf without its quotes; returns its
 * length, or -1 at the end of the line. */
static int ce_next_arg(const wchar_t **cmd, wchar_t *buf) {
  const wchar_t *p = *cmd;
  int n = 0, quoted = 0;
  while (*p == L' ' || *p == L'\t') p++;
  if (*p == L'\0') return -1;
  for (; *p && (quoted || (*p != L' ' && *p != L'\t')); p++) {
    if (*p == L'"') quoted = !quoted;
    else buf[n++] = *p;
  }
  *cmd = p;
  return n;
}

int WINAPI WinMainCRTStartup(HINSTANCE self, HINSTANCE prev, LPWSTR cmd, int show) {
  wchar_t path[MAX_PATH];
  const wchar_t *p = cmd ? cmd : L"";
  size_t cap = wcslen(p) + 1;
  wchar_t *buf = malloc(sizeof *buf * cap);
  char **argv = malloc(sizeof *argv * (cap / 2 + 2));
  int argc = 0, n;
  (void)prev, (void)show;
  if (!buf || !argv) return 1;
  n = (int)GetModuleFileNameW(self, path, MAX_PATH);
  argv[argc++] = ce_narrow(path, n > 0 ? n : 0);
  while ((n = ce_next_arg(&p, buf)) >= 0) argv[argc++] = ce_narrow(buf, n);
  argv[argc] = NULL;
  free(buf);
  return main(argc, argv);
}
