/* gsd_config.h - the collector daemon's settings: flags and config file.
 *
 * A config file holds "key = value" lines with the names of the long flags
 * (listen, http, store, log-level, gcsnap, record); '#' starts a comment. Flags given on the
 * command line win over the file. */
#ifndef GSD_CONFIG_H
#define GSD_CONFIG_H

#include <stddef.h>
#include <sys/socket.h>
#include <uv.h>
#include "gsd_log.h"

#define GSD_DEFAULT_LISTEN "127.0.0.1:7410"
#define GSD_DEFAULT_HTTP "127.0.0.1:7411"
#define GSD_DEFAULT_STORE "./gcsnap-store"

typedef struct gsd_config {
  char listen[256];            /* ADDR:PORT for agents */
  char http[256];              /* ADDR:PORT for the HTTP API */
  char store[1024];            /* store folder */
  char gcsnap[1024];           /* the gcsnap tool, for the analyses */
  char record[1024];           /* folder for .gcstream recordings; "" for none */
  gsd_log_level log_level;
  int help, version;
} gsd_config;

extern const char gsd_usage[];

/* Fills c from the defaults, the config file named by --config (if any) and
 * the flags. Returns GS_OK, or GS_EINVAL with the reason in err. */
int gsd_config_parse(gsd_config *c, int argc, char **argv, char *err, size_t cap);

/* Parses "IPV4:PORT" or "[IPV6]:PORT" (port 0 picks a free one). Returns
 * GS_OK or GS_EINVAL. */
int gsd_config_addr(const char *text, struct sockaddr_storage *addr);

/* Binds tcp (initialized here, its data field kept) to addr and listens
 * with cb; bound gets the address actually bound ("IP:PORT", the port
 * chosen for port 0), or the reason it failed. Returns GS_OK, GS_EINVAL or
 * GS_EIO. */
int gsd_listen(uv_loop_t *loop, uv_tcp_t *tcp, const char *addr, uv_connection_cb cb,
               char *bound, size_t cap);

#endif
