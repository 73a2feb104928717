/* gs_thread.h - the little threading the library uses: one helper thread and
 * counting semaphores to hand work to it.
 *
 * Implemented per platform family in src/unix (pthreads) and src/win (Win32
 * threads and semaphores, which Windows CE also has). */
#ifndef GS_THREAD_H
#define GS_THREAD_H

typedef struct gs_thread gs_thread;
typedef struct gs_sem gs_sem;

/* Starts fn(arg) on a new thread. Returns GS_OK or GS_ENOMEM. */
int gs_thread_start(gs_thread **t, void (*fn)(void *), void *arg);
/* Waits for the thread to return and frees it. */
void gs_thread_join(gs_thread *t);

int gs_sem_new(gs_sem **s, unsigned initial);
void gs_sem_wait(gs_sem *s);
void gs_sem_post(gs_sem *s);
void gs_sem_free(gs_sem *s);

/* Processors this process may run on (at least 1). */
unsigned gs_thread_cpus(void);

#endif
