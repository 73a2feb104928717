/* gsd_config.h - the collector daemon's settings: flags and config file.
 *
 * A config file holds "key = value" lines with the names of the long flags
 * (listen, http, store, log-level, record, http-token-file,
 * http-tls-cert, http-tls-key, and insecure and require-keys = yes|no); '#' starts a comment.
 * Flags given on the command line win over the file. The limits' keys are
 * their flags' names too: max-sessions, max-sessions-per-address,
 * hello-timeout, idle-timeout, max-objects, max-references,
 * max-object-references, max-sections, min-free-bytes. */
#ifndef GSD_CONFIG_H
#define GSD_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <uv.h>
#include "gsd_log.h"

#define GSD_DEFAULT_LISTEN "127.0.0.1:7410"
#define GSD_DEFAULT_HTTP "127.0.0.1:7411"
/* Default limits (see gsd_config.c's usage and collector/README.md). */
#define GSD_DEFAULT_MAX_SESSIONS 1024
#define GSD_DEFAULT_MAX_SESSIONS_PER_ADDRESS 256
#define GSD_DEFAULT_HELLO_TIMEOUT_MS 10000
#define GSD_DEFAULT_IDLE_TIMEOUT_MS 90000
#define GSD_DEFAULT_MAX_OBJECTS 50000000u
#define GSD_DEFAULT_MAX_REFERENCES 200000000u
/* A section costs the analyses a graph load and a few kilobytes of figures
 * each: 300,000 tiny sections once took a 1 KB snapshot to gigabytes. */
#define GSD_DEFAULT_MAX_SECTIONS 1000u
#define GSD_DEFAULT_MAX_VALIDATOR_BYTES (512ull << 20)
#define GSD_DEFAULT_MIN_FREE_BYTES (256ull << 20)
/* Longest HTTP API token, in bytes (visible ASCII, no blanks). */
#define GSD_TOKEN_MAX 1024

typedef struct gsd_config {
  char listen[256];            /* ADDR:PORT for agents */
  char http[256];              /* ADDR:PORT for the HTTP API */
  char store[1024];            /* store folder */
  char catalog[1024];          /* PostgreSQL URL; "" for the store's SQLite file */
  char identity[128];          /* this collector's name in a shared catalog; "": host name */
  char record[1024];           /* folder for .gcstream recordings; "" for none */
  char http_token_file[1024];   /* file holding the API's bearer token; "" for none */
  char http_token[GSD_TOKEN_MAX + 1];   /* its content; "" when no token is set */
  char http_tls_cert[1024];     /* PEM certificate chain for HTTPS; "" for plain HTTP */
  char http_tls_key[1024];      /* PEM private key of that certificate */
  int insecure;                 /* serve beyond loopback without keys or token */
  int require_keys;             /* refuse devices without a key, even with none in the catalog */
  /* limits (collector/README.md, "Limits"); 0 turns off those that say so */
  uint64_t max_sessions;        /* agent connections at once */
  uint64_t max_sessions_per_address;   /* of them from one IP address */
  uint64_t hello_timeout_ms;    /* from connect to a whole Hello */
  uint64_t idle_timeout_ms;     /* silence that ends a session */
  uint64_t max_objects;         /* per snapshot; 0: none */
  uint64_t max_references;      /* per snapshot; 0: none */
  uint64_t max_object_references;   /* of one object, 1 to 2^32 - 1 */
  uint64_t max_sections;        /* per snapshot; 0: none */
  uint64_t max_validator_bytes; /* per session; 0: none */
  uint64_t min_free_bytes;      /* free space the store keeps; 0: no check */
  gsd_log_level log_level;
  gsd_log_format log_format;
  int help, version;
} gsd_config;

extern const char gsd_usage[];

/* Fills c from the defaults, the config file named by --config (if any) and
 * the flags. Returns GS_OK, or GS_EINVAL with the reason in err. */
int gsd_config_parse(gsd_config *c, int argc, char **argv, char *err, size_t cap);

/* Parses "IPV4:PORT" or "[IPV6]:PORT" (port 0 picks a free one). Returns
 * GS_OK or GS_EINVAL. */
int gsd_config_addr(const char *text, struct sockaddr_storage *addr);

/* 1 when addr (as gsd_config_addr reads it) is a loopback address:
 * 127.0.0.0/8, ::1 or ::ffff:127.0.0.0/104. 0 for anything else, the
 * wildcard addresses 0.0.0.0 and :: included. */
int gsd_config_is_loopback(const char *addr);

/* Binds tcp (initialized here, its data field kept) to addr and listens
 * with cb; bound gets the address actually bound ("IP:PORT", the port
 * chosen for port 0), or the reason it failed. Returns GS_OK, GS_EINVAL or
 * GS_EIO. */
int gsd_listen(uv_loop_t *loop, uv_tcp_t *tcp, const char *addr, uv_connection_cb cb,
               char *bound, size_t cap);

#endif
