/* gs_nettrace.h - EventPipe's NetTrace stream (.nettrace, versions 4 and 5),
 * read forwards, an event at a time.
 *
 * The stream is what a .NET runtime writes to a diagnostics session and
 * what `dotnet-trace` saves: the magic "Nettrace", a FastSerialization
 * header (gs_fastser.h), a Trace object, then metadata, event, stack and
 * sequence point blocks, then a null tag. The reader holds one block (at
 * most GS_NT_BLOCK_MAX bytes) and the metadata of the events seen, never
 * more: events are handed out one by one, their payload valid until the
 * next call. It counts the events the writer dropped, from the sequence
 * numbers every capture thread gives its events and the sequence points
 * that repeat them. Errors name the stream's byte: "byte N: ...". */
#ifndef GS_NETTRACE_H
#define GS_NETTRACE_H

#include <stddef.h>
#include <stdint.h>
#include "gs_reader.h"

#define GS_NT_BLOCK_MAX ((uint32_t)16 << 20)   /* one block's bytes */
#define GS_NT_METADATA_MAX 65536u              /* kinds of event */
#define GS_NT_THREADS_MAX 65536u               /* capture threads tracked */

typedef struct gs_nt gs_nt;

typedef struct gs_nt_trace {
  int32_t version;              /* of the Trace object: 4 or 5 */
  uint32_t pointer_size;        /* 4 or 8: the size of the payloads' addresses */
  uint32_t process_id;
  int64_t qpc_frequency;        /* timestamp ticks per second (> 0) */
} gs_nt_trace;

typedef struct gs_nt_event {
  const char *provider;         /* UTF-8, from the event's metadata */
  uint32_t event_id, version;
  uint64_t thread_id, capture_thread;
  uint32_t sequence;
  int64_t timestamp;            /* in ticks of qpc_frequency */
  const unsigned char *payload;
  size_t payload_len;
  uint64_t offset;              /* of the payload in the stream, for messages */
} gs_nt_event;

/* Reads the magic, the header and the Trace object through fn. GS_OK, or an
 * error with the reason in err (GS_EFORMAT for a stream that is not a
 * NetTrace of a version read here). *out is NULL on failure. */
int gs_nt_open(gs_nt **out, gs_read_fn fn, void *ctx, char *err, size_t errcap);

/* The next event: GS_OK, GS_EOF after the stream's closing tag, or an error
 * (a stream that ends without that tag is truncated: GS_EFORMAT). */
int gs_nt_next(gs_nt *nt, gs_nt_event *ev);

const gs_nt_trace *gs_nt_trace_of(const gs_nt *nt);
/* Events the writer dropped, as far as the stream has told so far. */
uint64_t gs_nt_lost(const gs_nt *nt);
/* Bytes of the stream read so far. */
uint64_t gs_nt_bytes(const gs_nt *nt);
/* Whether the reader holds bytes it has not handed out yet (the rest of a
 * block, or what it read ahead): the next gs_nt_next needs no input then
 * until they are used up. For a caller that must not wait for events. */
int gs_nt_buffered(const gs_nt *nt);

void gs_nt_free(gs_nt *nt);

#endif
