/* gs_port_dotnet.c - .NET programs' diagnostics endpoints on Windows
 * (gs_port_dotnet.h): the named pipes \\.\pipe\dotnet-diagnostic-PID,
 * connected to as the port's sockets (gs_port_pipe.c). */
#include "gs_port_socket.h"   /* first: winsock2.h before windows.h */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef UNDER_CE
#include <psapi.h>
#endif
#include "gs_error.h"
#include "gs_port_dotnet.h"

#define PIPE_PREFIX "dotnet-diagnostic-"

int gs_port_dotnet_endpoint(unsigned long pid, char *path, size_t cap, char *err, size_t errcap) {
  if ((size_t)snprintf(path, cap, "\\\\.\\pipe\\" PIPE_PREFIX "%lu", pid) >= cap) {
    snprintf(err, errcap, "no room for the pipe's name");
    return GS_EINVAL;
  }
  return GS_OK;
}

int gs_port_dotnet_list(gs_port_dotnet_fn fn, void *ctx) {
#ifdef UNDER_CE
  (void)fn;
  (void)ctx;
  return GS_OK;
#else
  WIN32_FIND_DATAA fd;
  HANDLE h = FindFirstFileA("\\\\.\\pipe\\*", &fd);
  int rc = 0;
  if (h == INVALID_HANDLE_VALUE) return GS_OK;
  do {
    size_t k = strlen(PIPE_PREFIX);
    char *end, path[300];
    unsigned long pid;
    if (strncmp(fd.cFileName, PIPE_PREFIX, k)) continue;
    pid = strtoul(fd.cFileName + k, &end, 10);
    if (!pid || *end) continue;
    snprintf(path, sizeof path, "\\\\.\\pipe\\%s", fd.cFileName);
    rc = fn(ctx, pid, path);
  } while (!rc && FindNextFileA(h, &fd));
  FindClose(h);
  return rc;
#endif
}

int gs_port_dotnet_connect(gs_port_socket **s, const char *endpoint, char *err, size_t errcap) {
  return gs_port_pipe_connect(s, endpoint, err, errcap);
}

int gs_port_proc_alive(unsigned long pid) {
  HANDLE h = OpenProcess(SYNCHRONIZE, FALSE, (DWORD)pid);
  int alive;
  if (!h) return GetLastError() == ERROR_ACCESS_DENIED;
  alive = WaitForSingleObject(h, 0) == WAIT_TIMEOUT;
  CloseHandle(h);
  return alive;
}

uint64_t gs_port_proc_rss(unsigned long pid) {
#ifdef UNDER_CE
  (void)pid;
  return 0;
#else
  PROCESS_MEMORY_COUNTERS pmc;
  HANDLE h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, (DWORD)pid);
  uint64_t rss = 0;
  if (!h) return 0;
  if (GetProcessMemoryInfo(h, &pmc, sizeof pmc)) rss = (uint64_t)pmc.WorkingSetSize;
  CloseHandle(h);
  return rss;
#endif
}
