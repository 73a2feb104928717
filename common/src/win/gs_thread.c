/* gs_thread.c (win) - threads and semaphores on Win32 (also Windows CE). */
#include <windows.h>
#include <stdlib.h>
#include "gs_error.h"
#include "gs_thread.h"

struct gs_thread {
  HANDLE handle;
  void (*fn)(void *);
  void *arg;
};

struct gs_sem {
  HANDLE handle;
};

static DWORD WINAPI thread_main(LPVOID p) {
  gs_thread *t = p;
  t->fn(t->arg);
  return 0;
}

int gs_thread_start(gs_thread **out, void (*fn)(void *), void *arg) {
  gs_thread *t = malloc(sizeof *t);
  if (!t) return GS_ENOMEM;
  t->fn = fn;
  t->arg = arg;
  if (!(t->handle = CreateThread(NULL, 0, thread_main, t, 0, NULL))) { free(t); return GS_ENOMEM; }
  *out = t;
  return GS_OK;
}

void gs_thread_join(gs_thread *t) {
  WaitForSingleObject(t->handle, INFINITE);
  CloseHandle(t->handle);
  free(t);
}

int gs_sem_new(gs_sem **out, unsigned initial) {
  gs_sem *s = malloc(sizeof *s);
  if (!s) return GS_ENOMEM;
  if (!(s->handle = CreateSemaphoreW(NULL, (LONG)initial, 0x7fffffff, NULL))) {
    free(s);
    return GS_ENOMEM;
  }
  *out = s;
  return GS_OK;
}

void gs_sem_wait(gs_sem *s) { WaitForSingleObject(s->handle, INFINITE); }

void gs_sem_post(gs_sem *s) { ReleaseSemaphore(s->handle, 1, NULL); }

void gs_sem_free(gs_sem *s) {
  if (!s) return;
  CloseHandle(s->handle);
  free(s);
}

unsigned gs_thread_cpus(void) {
  SYSTEM_INFO info;
  GetSystemInfo(&info);
  return info.dwNumberOfProcessors > 1 ? (unsigned)info.dwNumberOfProcessors : 1u;
}
