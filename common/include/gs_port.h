/* gs_port.h - the operating system calls gcsnap makes, behind one interface.
 *
 * Implemented once per platform family: src/unix (POSIX) and src/win (Win32,
 * wide-character calls; paths are UTF-8 at this interface). Nothing else in
 * common/ or agent/ calls the operating system, so a new device family needs
 * one new file. Calls that fail return a negative gs error code and remember
 * the system's reason for gs_port_error_text(); that memory is one per
 * process, so only a single-threaded caller (the agent) should rely on it. */
#ifndef GS_PORT_H
#define GS_PORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- reading by file descriptor (the record reader) ---- */

/* Reads up to cap bytes from fd; *got = 0 at end of input. Returns 0 or GS_EIO. */
int gs_port_read_fd(int fd, void *buf, size_t cap, size_t *got);

/* Size of the file behind fd in bytes, or 0 when unknown (pipes). */
unsigned long long gs_port_fd_size(int fd);

/* Reads up to cap bytes at offset of the file behind fd without moving its
 * position, so another reader of fd is undisturbed. Returns 0, GS_EIO, or
 * GS_EINVAL where the platform cannot (Windows). */
int gs_port_pread_fd(int fd, void *buf, size_t cap, uint64_t offset, size_t *got);

/* ---- memory ---- */

/* Zeroed memory for large tables that are touched at random: backed by huge
 * pages where the system offers them, which saves a TLB miss per lookup. */
void *gs_port_alloc_table(size_t bytes);
void gs_port_free_table(void *p, size_t bytes);

/* ---- files ---- */

typedef struct gs_port_file gs_port_file;

/* Opens an existing file for reading. */
int gs_port_file_open(gs_port_file **f, const char *path);
/* Creates a new file for writing; fails if path exists, so that a stale file
 * or a link planted under the name is never written through. */
int gs_port_file_create(gs_port_file **f, const char *path);
/* Opens an existing file for writing without truncating or replacing it:
 * for devices and pipes, which a rename cannot replace. */
int gs_port_file_open_write(gs_port_file **f, const char *path);
/* Standard output, in binary mode. Closing it flushes but keeps it open. */
int gs_port_file_stdout(gs_port_file **f);

/* A temporary file, read and written through stdio, that is gone once
 * closed (or when the process ends): in the system's folder for them
 * (TMPDIR, or Windows' temporary path). NULL when none can be made. */
FILE *gs_port_temp_file(void);

/* Reads up to cap bytes; *got = 0 at end of file. */
int gs_port_file_read(gs_port_file *f, void *buf, size_t cap, size_t *got);
/* Writes all len bytes. */
int gs_port_file_write(gs_port_file *f, const void *buf, size_t len);
/* Makes written bytes durable (a no-op for standard output). */
int gs_port_file_sync(gs_port_file *f);
/* Closes and frees f (NULL is fine); reports a failed close. */
int gs_port_file_close(gs_port_file *f);

/* What is at path: nothing, a regular file, a folder or something else (a
 * device, a pipe). */
typedef enum gs_port_path_kind {
  GS_PORT_MISSING, GS_PORT_REGULAR, GS_PORT_FOLDER, GS_PORT_OTHER
} gs_port_path_kind;
gs_port_path_kind gs_port_path_kind_of(const char *path);

/* Renames from to to, replacing to if it exists. */
int gs_port_rename(const char *from, const char *to);
int gs_port_remove(const char *path);

/* Until called again with NULL, removes path if the process is interrupted
 * or terminated, so that a half-written file does not survive it. The
 * string must stay valid meanwhile. One path at a time. */
void gs_port_remove_on_signal(const char *path);

/* ---- folders (the agent's spool) ---- */

/* Creates the folder path, readable by its owner only (parents must
 * exist); GS_OK when a folder is there already. */
int gs_port_make_dir(const char *path);

/* Called once per regular file of a folder, with its name (UTF-8, no
 * folder) and size in bytes; a nonzero return stops the listing. */
typedef int (*gs_port_dir_fn)(void *ctx, const char *name, uint64_t size);
/* Lists the regular files of the folder path, in no stated order; returns
 * GS_OK, GS_EIO when the folder cannot be read, or what fn returned to
 * stop. Folders and other kinds of entry are skipped. */
int gs_port_list_dir(const char *path, gs_port_dir_fn fn, void *ctx);

/* ---- process and time ---- */

unsigned long gs_port_pid(void);

/* The CPU this build is for, as Hello says it: "x86_64", "armv5te",
 * "arm64", ..., "unknown" (gs_port_arch.c, shared by every platform). */
const char *gs_port_architecture(void);

/* Milliseconds since the system booted, the time base of the dump format. */
uint64_t gs_port_clock_ms(void);

/* Monotonic microseconds from an arbitrary origin, for durations. */
uint64_t gs_port_time_us(void);

/* Peak resident memory of this process in bytes, or 0 when unknown. */
uint64_t gs_port_peak_rss(void);

/* Why the last failed port call failed, as the system says it. */
const char *gs_port_error_text(void);

/* ---- network: a TCP client (the agent's link to the collector) ----
 *
 * Sockets are non-blocking underneath; every wait is bounded by a timeout
 * given here, so a silent peer never hangs the caller for longer. */

typedef struct gs_port_socket gs_port_socket;

/* Resolves host and port (a number or a service name) and connects to the
 * first address that answers, giving up after timeout_ms in all. On failure
 * err says what failed ("resolving HOST: ...", "connecting to HOST:PORT:
 * Connection refused", "... timed out"); returns GS_EIO. */
int gs_port_net_connect(gs_port_socket **s, const char *host, const char *port,
                        unsigned timeout_ms, char *err, size_t errcap);
/* Sends all len bytes. Blocks while the system's send buffer is full, which
 * is TCP's backpressure; GS_EIO when the link fails or no byte could be sent
 * for stall_ms (0: no limit). */
int gs_port_net_send(gs_port_socket *s, const void *buf, size_t len, unsigned stall_ms);
/* Receives up to cap bytes, waiting up to timeout_ms (negative: no limit).
 * GS_OK with *got > 0: bytes; GS_OK with *got == 0: the time ran out;
 * GS_EOF: the peer closed the link; GS_EIO: the link failed. */
int gs_port_net_recv(gs_port_socket *s, void *buf, size_t cap, size_t *got, int timeout_ms);
/* Closes and frees s (NULL is fine). */
void gs_port_net_close(gs_port_socket *s);

void gs_port_sleep_ms(unsigned ms);
/* Milliseconds since 1970-01-01 UTC: for IDs that must not repeat after a
 * reboot, which the boot clock does. */
uint64_t gs_port_wall_ms(void);

#endif
