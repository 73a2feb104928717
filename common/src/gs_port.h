/* gs_port.h - the few operating system calls the portable library needs.
 *
 * Implemented once per platform family: src/unix and src/win. */
#ifndef GS_PORT_H
#define GS_PORT_H

#include <stddef.h>

/* Reads up to cap bytes from fd; *got = 0 at end of input. Returns 0 or GS_EIO. */
int gs_port_read_fd(int fd, void *buf, size_t cap, size_t *got);

/* Size of the file behind fd in bytes, or 0 when unknown (pipes). */
unsigned long long gs_port_fd_size(int fd);

/* Zeroed memory for large tables that are touched at random: backed by huge
 * pages where the system offers them, which saves a TLB miss per lookup. */
void *gs_port_alloc_table(size_t bytes);
void gs_port_free_table(void *p, size_t bytes);

#endif
