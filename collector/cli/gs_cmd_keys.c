/* gs_cmd_keys.c - "gcsnap keys": the device keys agents prove themselves
 * with (collector/README.md, "Device keys").
 *
 *   gcsnap keys add DEVICE [--key-file PATH] [--replace]
 *   gcsnap keys list
 *   gcsnap keys rm DEVICE
 *
 * Works on the store's catalog directly, not through the HTTP API: keys
 * are managed on the collector's host by whoever may read its store, and
 * SQLite lets this run while gcsnapd does (it waits for a busy catalog).
 * gcsnapd reads the keys at each Hello, so a change holds from the next
 * connection on. The catalog keeps only the verifier SHA-256(key); the key
 * itself is shown once, or written to --key-file, and never again. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gs_args.h"
#include "gs_cli.h"
#include "gs_error.h"
#include "gs_json.h"
#include "gs_table.h"
#include "gs_units.h"
#include "gs_wire.h"
#include "gsd_auth.h"
#include "gsd_store.h"

static const char usage[] =
  "usage: gcsnap keys add DEVICE [--key-file PATH] [--replace]\n"
  "       gcsnap keys list\n"
  "       gcsnap keys rm DEVICE\n"
  "       (each also takes [--store DIR | --catalog URL] [--json])\n"
  "\n"
  "The device keys of the collector gcsnapd, in its store's catalog. A\n"
  "device with a key must prove it holds the key when its agent connects\n"
  "(gcsnap-agent --key-file); once any device has a key, a device without\n"
  "one is refused. The catalog keeps only a hash of each key: add shows the\n"
  "new key once (64 hex digits), or writes it to --key-file, and it cannot\n"
  "be shown again. Changes hold from the agents' next connection on, also\n"
  "while gcsnapd runs.\n"
  "\n"
  "  --store DIR      the collector's store folder (default " GSD_DEFAULT_STORE ")\n"
  "  --catalog URL    the collectors' PostgreSQL catalog (postgresql://...,\n"
  "                   as given to gcsnapd --catalog) instead of the store's\n"
  "  --key-file PATH  write the new key to PATH (created, readable by its\n"
  "                   owner only; an existing file is left alone and refused)\n"
  "                   instead of printing it\n"
  "  --replace        give a device that has a key a new one (the old one\n"
  "                   stops working)\n"
  "  --json           print JSON instead of text\n"
  "  -h, --help       show this help\n"
  "\n"
  "Exit status: 0 done, 1 refused (the device has a key already, or none to\n"
  "remove), 2 usage error or the store cannot be used.\n";

enum { OPT_HELP = 1, OPT_STORE, OPT_KEY_FILE, OPT_REPLACE, OPT_JSON, OPT_CATALOG };

static const gs_option options[] = {
  {"help", 'h', 0, OPT_HELP},
  {"store", 0, 1, OPT_STORE},
  {"catalog", 0, 1, OPT_CATALOG},
  {"key-file", 0, 1, OPT_KEY_FILE},
  {"replace", 0, 0, OPT_REPLACE},
  {"json", 0, 0, OPT_JSON},
  {NULL, 0, 0, 0},
};

typedef struct keys_args {
  const char *store, *catalog, *action, *device, *key_file;
  int replace, json, help;
} keys_args;

static int usage_error(const char *message) {
  return gs_cli_usage_error("keys", usage, message);
}

/* What gcsnapd accepts in a Hello: text of at most GSD_DEVICE_ID_MAX bytes. */
static int device_ok(const char *id) {
  const unsigned char *p;
  if (!*id || strlen(id) > GSD_DEVICE_ID_MAX) return 0;
  for (p = (const unsigned char *)id; *p; p++)
    if (*p < 0x20 || *p == 0x7f) return 0;
  return 1;
}

static int parse_args(int argc, char **argv, keys_args *ka) {
  gs_args a;
  gs_arg_kind k;
  gs_args_init(&a, argc, argv, options);
  ka->store = GSD_DEFAULT_STORE;
  while ((k = gs_args_next(&a)) != GS_ARG_END) {
    if (k == GS_ARG_ERROR) return usage_error(a.error);
    if (k == GS_ARG_OPERAND) {
      if (!ka->action) ka->action = a.value;
      else if (!ka->device) ka->device = a.value;
      else return usage_error("too many arguments");
      continue;
    }
    switch (a.id) {
    case OPT_HELP: ka->help = 1; break;
    case OPT_STORE: ka->store = a.value; break;
    case OPT_CATALOG: ka->catalog = a.value; break;
    case OPT_KEY_FILE: ka->key_file = a.value; break;
    case OPT_REPLACE: ka->replace = 1; break;
    case OPT_JSON: ka->json = 1; break;
    }
  }
  if (ka->help) return GS_EXIT_OK;
  if (!ka->action) return usage_error("no action given (add, list or rm)");
  if (!*ka->store) return usage_error("--store needs a folder");
  if (ka->catalog && !gsd_store_is_pg_url(ka->catalog))
    return usage_error("--catalog needs a postgresql:// URL");
  if (strcmp(ka->action, "add") != 0 && (ka->key_file || ka->replace))
    return usage_error("--key-file and --replace go with add");
  if (strcmp(ka->action, "list") == 0)
    return ka->device ? usage_error("list takes no argument") : GS_EXIT_OK;
  if (strcmp(ka->action, "add") != 0 && strcmp(ka->action, "rm") != 0)
    return usage_error("unknown action (add, list or rm)");
  if (!ka->device) return usage_error("add and rm need a DEVICE");
  if (!device_ok(ka->device))
    return usage_error("DEVICE must be text of 1 to 80 bytes without control characters");
  if (ka->key_file && !*ka->key_file) return usage_error("--key-file needs a path");
  return GS_EXIT_OK;
}

/* Creates path (never through an existing file or link) with the key in
 * hex and a newline, readable and writable by its owner only. */
static int write_key_file(const char *path, const char *hex) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
  size_t len = strlen(hex);
  int ok;
  if (fd < 0) {
    gs_cli_error("keys: cannot create '%s': %s", path, strerror(errno));
    return GS_EIO;
  }
  ok = write(fd, hex, len) == (ssize_t)len && write(fd, "\n", 1) == 1 && fsync(fd) == 0;
  if (close(fd) != 0) ok = 0;
  if (!ok) {
    gs_cli_error("keys: cannot write '%s': %s", path, strerror(errno));
    unlink(path);
    return GS_EIO;
  }
  return GS_OK;
}

static int print_added(const keys_args *ka, const char *hex) {
  json_t *o;
  int err;
  if (!ka->json) {
    if (ka->key_file)
      printf("Key for device %s written to %s.\n", ka->device, ka->key_file);
    else
      printf("Key for device %s (shown only this once; give it to its agent with"
             " --key-file):\n%s\n", ka->device, hex);
    return 0;
  }
  if (!(o = json_object())) return -1;
  err = gs_json_set(o, "device_id", gs_json_cstring(ka->device)) ||
        gs_json_set(o, ka->key_file ? "key_file" : "key",
                    gs_json_cstring(ka->key_file ? ka->key_file : hex)) ||
        gs_json_set(o, "replaced", json_boolean(ka->replace)) || gs_json_print(o);
  json_decref(o);
  return err ? -1 : 0;
}

static int do_add(const keys_args *ka, gsd_store *st) {
  uint8_t key[GS_WIRE_KEY_BYTES], verifier[GSD_AUTH_VERIFIER_BYTES];
  char hex[2 * GS_WIRE_KEY_BYTES + 1];
  int rc;
  if (gsd_auth_new_key(key, verifier) != GS_OK) {
    gs_cli_error("keys: no random bytes from the system");
    return GS_EXIT_USAGE;
  }
  gsd_auth_hex(key, sizeof key, hex);
  memset(key, 0, sizeof key);
  /* The file first: a key stored but not written out would lock the
   * device out. */
  if (ka->key_file && write_key_file(ka->key_file, hex) != GS_OK) return GS_EXIT_USAGE;
  rc = gsd_store_key_set(st, ka->device, verifier, sizeof verifier, ka->replace);
  if (rc != GS_OK) {
    if (ka->key_file) unlink(ka->key_file);
    if (rc == GS_EINVAL) {
      gs_cli_error("keys: device %s already has a key (--replace gives it a new one)",
                   ka->device);
      return GS_EXIT_INVALID;
    }
    gs_cli_error("keys: %s", gsd_store_error(st));
    return GS_EXIT_USAGE;
  }
  rc = print_added(ka, hex);
  memset(hex, 0, sizeof hex);
  return rc ? GS_EXIT_USAGE : GS_EXIT_OK;
}

static int print_list(const keys_args *ka, json_t *keys) {
  static const char *const heads[] = {"DEVICE", "CREATED"};
  gs_table t;
  size_t i;
  int err = 0;
  if (ka->json) {
    json_t *o = json_object();
    err = !o || gs_json_set(o, "keys", json_incref(keys)) || gs_json_print(o);
    json_decref(o);
    return err ? -1 : 0;
  }
  if (json_array_size(keys) == 0) {
    printf("No device keys in %s: agents are not asked for one.\n",
           ka->catalog ? "the PostgreSQL catalog" : ka->store);
    return 0;
  }
  gs_table_init(&t, 2, heads, "ll");
  for (i = 0; !err && i < json_array_size(keys); i++) {
    json_t *k = json_array_get(keys, i);
    char created[40];
    const char *cells[2];
    gs_units_format_time(created, sizeof created,
                         (int64_t)json_integer_value(json_object_get(k, "created")));
    cells[0] = json_string_value(json_object_get(k, "device_id"));
    cells[1] = created;
    err = gs_table_add(&t, cells);
  }
  if (!err) err = gs_table_print(&t, stdout);
  gs_table_free(&t);
  return err;
}

static int do_list(const keys_args *ka, gsd_store *st) {
  json_t *keys = NULL;
  int err;
  if (gsd_store_list_keys(st, &keys) != GS_OK) {
    gs_cli_error("keys: %s", gsd_store_error(st));
    return GS_EXIT_USAGE;
  }
  err = print_list(ka, keys);
  json_decref(keys);
  return err ? GS_EXIT_USAGE : GS_EXIT_OK;
}

static int do_rm(const keys_args *ka, gsd_store *st) {
  int rc = gsd_store_key_remove(st, ka->device);
  if (rc == GS_EOF) {
    gs_cli_error("keys: device %s has no key", ka->device);
    return GS_EXIT_INVALID;
  }
  if (rc != GS_OK) {
    gs_cli_error("keys: %s", gsd_store_error(st));
    return GS_EXIT_USAGE;
  }
  if (!ka->json) {
    printf("Key of device %s removed.\n", ka->device);
  } else {
    json_t *o = json_object();
    int err = !o || gs_json_set(o, "device_id", gs_json_cstring(ka->device)) ||
              gs_json_set(o, "removed", json_true()) || gs_json_print(o);
    json_decref(o);
    if (err) return GS_EXIT_USAGE;
  }
  return GS_EXIT_OK;
}

int gs_cmd_keys(int argc, char **argv) {
  keys_args ka;
  gsd_store *st;
  char err[1200];
  int code;
  memset(&ka, 0, sizeof ka);
  if ((code = parse_args(argc, argv, &ka)) != GS_EXIT_OK) return code;
  if (ka.help) return gs_cli_help(usage);
  /* Only add may make the store: keys can be set before gcsnapd first runs. */
  if (ka.catalog ? gsd_store_keys_open_pg(&st, ka.catalog, err, sizeof err)
                 : gsd_store_keys_open(&st, ka.store, strcmp(ka.action, "add") == 0, err,
                                       sizeof err)) {
    gs_cli_error("keys: %s", err);
    return GS_EXIT_USAGE;
  }
  if (strcmp(ka.action, "add") == 0) code = do_add(&ka, st);
  else if (strcmp(ka.action, "list") == 0) code = do_list(&ka, st);
  else code = do_rm(&ka, st);
  gsd_store_close(st);
  return gs_cli_finish(code);
}
