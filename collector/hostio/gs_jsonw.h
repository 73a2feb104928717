/* gs_jsonw.h - JSON made a member at a time.
 *
 * One way to write a document either prints it as it is made, in the
 * layout of gs_json_print (for lists as long as a heap, which a jansson
 * tree would hold at hundreds of bytes an entry), or builds it as a
 * jansson value (for callers that embed or send it). Values are jansson's,
 * so both give the same text. Errors are kept: the first stops the writing
 * and gs_jsonw_finish returns it. */
#ifndef GS_JSONW_H
#define GS_JSONW_H

#include <stdio.h>
#include <jansson.h>

typedef struct gs_jsonw gs_jsonw;

/* A writer that prints to out, or that builds a value; NULL when out of
 * memory. */
gs_jsonw *gs_jsonw_print(FILE *out);
gs_jsonw *gs_jsonw_build(void);

/* Members: key names the member inside an object and is NULL inside an
 * array or for the document itself. gs_jsonw_value takes value's reference
 * (NULL: out of memory). */
void gs_jsonw_object(gs_jsonw *w, const char *key);
void gs_jsonw_array(gs_jsonw *w, const char *key);
void gs_jsonw_end(gs_jsonw *w);
void gs_jsonw_value(gs_jsonw *w, const char *key, json_t *value);

/* Frees w, after the newline that ends a printed document (if anything
 * was printed); a built one goes to *built (NULL on error). A NULL w (one
 * that could not be made) is GS_ENOMEM. Returns GS_OK, GS_ENOMEM or
 * GS_EIO. */
int gs_jsonw_finish(gs_jsonw *w, json_t **built);

#endif
