/* gs_thread.c (unix) - threads and semaphores on pthreads.
 *
 * Semaphores are a mutex and a condition variable rather than sem_t, which
 * not every POSIX system implements unnamed. */
#define _DEFAULT_SOURCE 1
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include "gs_error.h"
#include "gs_thread.h"

struct gs_thread {
  pthread_t id;
  void (*fn)(void *);
  void *arg;
};

struct gs_sem {
  pthread_mutex_t lock;
  pthread_cond_t nonzero;
  unsigned count;
};

static void *thread_main(void *p) {
  gs_thread *t = p;
  t->fn(t->arg);
  return NULL;
}

int gs_thread_start(gs_thread **out, void (*fn)(void *), void *arg) {
  gs_thread *t = malloc(sizeof *t);
  if (!t) return GS_ENOMEM;
  t->fn = fn;
  t->arg = arg;
  if (pthread_create(&t->id, NULL, thread_main, t)) { free(t); return GS_ENOMEM; }
  *out = t;
  return GS_OK;
}

void gs_thread_join(gs_thread *t) {
  pthread_join(t->id, NULL);
  free(t);
}

int gs_sem_new(gs_sem **out, unsigned initial) {
  gs_sem *s = malloc(sizeof *s);
  if (!s) return GS_ENOMEM;
  if (pthread_mutex_init(&s->lock, NULL)) { free(s); return GS_ENOMEM; }
  if (pthread_cond_init(&s->nonzero, NULL)) {
    pthread_mutex_destroy(&s->lock);
    free(s);
    return GS_ENOMEM;
  }
  s->count = initial;
  *out = s;
  return GS_OK;
}

void gs_sem_wait(gs_sem *s) {
  pthread_mutex_lock(&s->lock);
  while (s->count == 0) pthread_cond_wait(&s->nonzero, &s->lock);
  s->count--;
  pthread_mutex_unlock(&s->lock);
}

void gs_sem_post(gs_sem *s) {
  pthread_mutex_lock(&s->lock);
  s->count++;
  pthread_cond_signal(&s->nonzero);
  pthread_mutex_unlock(&s->lock);
}

void gs_sem_free(gs_sem *s) {
  if (!s) return;
  pthread_cond_destroy(&s->nonzero);
  pthread_mutex_destroy(&s->lock);
  free(s);
}

unsigned gs_thread_cpus(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 1 ? (unsigned)n : 1u;
}
