/* gs_dotnet_ipc.h - the client side of a .NET program's diagnostics IPC.
 *
 * A message is the magic "DOTNET_IPC_V1\0", its total size (u16, the
 * 20-byte header included), a command set, a command ID, two reserved
 * bytes and a payload; the program answers each command on the connection
 * it came on, with OK (command set 0xFF, ID 0) or an error and its HRESULT.
 * Every wait is bounded and every reply checked: the program is another
 * process. Each call opens its own connection, as the program wants; a
 * tracing session's events then follow its reply on that connection. */
#ifndef GS_DOTNET_IPC_H
#define GS_DOTNET_IPC_H

#include <stddef.h>
#include <stdint.h>
#include "gs_port.h"

#define GS_DIPC_REPLY_MS 10000u
#define GS_DIPC_MESSAGE_MAX 65535u      /* a u16 size */

typedef struct gs_dipc_process {
  uint64_t pid;
  char command_line[512], os[64], arch[64];
  char assembly[256], version[64];      /* empty before .NET 6 */
} gs_dipc_process;

/* Where the program is: an endpoint the agent connects to for each command,
 * or (reverse mode, gs_dipc_listen) a socket the agent listens on, to which
 * the runtime connects for each command. */
typedef struct gs_dipc_peer {
  char endpoint[256];                   /* the socket's path or pipe's name */
  struct gs_port_listener *listener;    /* reverse mode; NULL otherwise */
  unsigned wait_ms;                     /* reverse: for the runtime's connection */
  unsigned long pid;                    /* reverse: from the runtime's advertisement */
} gs_dipc_peer;

typedef struct gs_dipc_provider {
  const char *name;
  uint64_t keywords;
  uint32_t level;
} gs_dipc_provider;

/* ProcessInfo2 (ProcessInfo where refused). GS_OK, or GS_EIO / GS_EFORMAT
 * with the reason in err. */
int gs_dipc_process_info(gs_dipc_peer *peer, gs_dipc_process *info, char *err, size_t errcap);

/* CollectTracing2 in the NetTrace format, without rundown: GS_OK with the
 * connection the events will come on and the session's ID. The runtime
 * may answer only after the collection that the session's keywords induce
 * (seconds for a large heap): the reply may take reply_ms, at least
 * GS_DIPC_REPLY_MS. */
int gs_dipc_collect(gs_dipc_peer *peer, uint32_t buffer_mb, const gs_dipc_provider *p,
                    unsigned n, unsigned reply_ms, gs_port_socket **stream, uint64_t *session,
                    char *err, size_t errcap);

/* StopTracing of a session. */
int gs_dipc_stop(gs_dipc_peer *peer, uint64_t session, char *err, size_t errcap);

/* Reverse mode: listens on path, waits up to wait_ms for the runtime (a
 * program started with DOTNET_DiagnosticPorts=path), and resumes it
 * (ResumeRuntime: it waits for that before running any managed code).
 * GS_OK, or an error with the reason. */
int gs_dipc_listen(gs_dipc_peer *peer, const char *path, unsigned wait_ms, char *err,
                   size_t errcap);
void gs_dipc_unlisten(gs_dipc_peer *peer);

#endif
