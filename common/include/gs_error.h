/* gs_error.h - error codes shared by every gcsnap module.
 *
 * Every function that can fail returns one of these (0 is success). They are
 * negative so that functions returning a count can return an error in the
 * same int, the way libuv does. */
#ifndef GS_ERROR_H
#define GS_ERROR_H

#define GS_OK        0
#define GS_EOF      (-1)  /* no more records / sections */
#define GS_ENOMEM   (-2)  /* allocation failed */
#define GS_EIO      (-3)  /* read or write failed */
#define GS_EFORMAT  (-4)  /* input breaks the record format; see the diagnostic */
#define GS_ELIMIT   (-5)  /* a stated limit was exceeded */
#define GS_EINVAL   (-6)  /* bad argument */

const char *gs_strerror(int err);

#endif
