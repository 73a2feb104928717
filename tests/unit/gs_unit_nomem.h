/* gs_unit_nomem.h - failing one allocation of a test program on purpose.
 *
 * A program linked with gs_unit_nomem has its malloc, calloc and realloc
 * wrapped (GNU ld's --wrap, on the host): after gsu_nomem_arm(k), the k-th
 * allocation from then on, on whichever thread, returns NULL. */
#ifndef GS_UNIT_NOMEM_H
#define GS_UNIT_NOMEM_H

/* Makes allocation k from now fail; 0: none fails. */
void gsu_nomem_arm(long k);
/* Disarms; returns 1 when the failing allocation came since the arming. */
int gsu_nomem_disarm(void);

#endif
