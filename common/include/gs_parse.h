/* gs_parse.h - the values people write on command lines and in config
 * files, read one way by every program (agent, gcsnap, gcsnapd).
 *
 *   durations  a decimal number (up to 3 decimals) with ms, s, m, h or d;
 *              a bare number is seconds: 500ms, 1.5s, 10, 2m, 0.5h, 1d
 *   sizes      a decimal number (up to 3 decimals) with K, M, G or T
 *              (powers of 1024, either case; a B or iB after the letter
 *              changes nothing); a bare number is whole bytes: 4096,
 *              512K, 1.5G, 2TiB
 *   addresses  HOST, HOST:PORT, [ADDR] or [ADDR]:PORT (an IPv6 address
 *              in brackets); PORT is a number or a service name
 *
 * Each parser takes the whole string; ranges are the caller's to check.
 * Portable C99. */
#ifndef GS_PARSE_H
#define GS_PARSE_H

#include <stddef.h>
#include <stdint.h>

/* Milliseconds (a fraction of a millisecond is dropped). GS_OK, or
 * GS_EINVAL when s is not a duration or does not fit. */
int gs_parse_duration_ms(const char *s, uint64_t *ms);
/* Bytes (a fraction of a byte is dropped). GS_OK or GS_EINVAL. */
int gs_parse_size(const char *s, uint64_t *bytes);
/* Splits an address into host and port; without a port, default_port, or
 * GS_EINVAL when default_port is NULL. GS_EINVAL too for an empty host or
 * port, or one longer than its buffer. */
int gs_parse_address(const char *s, const char *default_port, char *host, size_t host_cap,
                     char *port, size_t port_cap);

#endif
