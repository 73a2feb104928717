/* gs_port.h - the few operating system calls the portable library needs.
 *
 * Implemented once per platform family: src/unix and src/win. */
#ifndef GS_PORT_H
#define GS_PORT_H

#include <stddef.h>

/* Reads up to cap bytes from fd; *got = 0 at end of input. Returns 0 or GS_EIO. */
int gs_port_read_fd(int fd, void *buf, size_t cap, size_t *got);

#endif
