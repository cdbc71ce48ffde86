/* error.h — the error record every fallible internal function fills.
 *
 * The library never prints and never exits (docs/ARCHITECTURE.md §11): a failing function
 * returns a negative ANONKIT_E* status and describes the failure in an
 * ak_error (message, and the file/line/column it concerns when there is one).
 * The CLI turns the record into "anonkit: FILE:LINE: message". */
#ifndef AK_ERROR_H
#define AK_ERROR_H

#include <stddef.h>
#include "anonkit/anonkit.h"

typedef struct ak_error {
    int code;           /* ANONKIT_OK or a negative ANONKIT_E* status */
    char file[512];     /* file the problem is in, "" when none */
    long line;          /* 1-based line in file, 0 when none */
    long column;        /* 1-based column (field number for CSV), 0 when none */
    char message[1024]; /* what is wrong, one sentence, no trailing newline */
} ak_error;

/* Clears an error record to "no error". */
void ak_err_clear(ak_error *err);

/* Fills err (when not NULL) and returns code, so callers can write
 * `return ak_err_set(err, ANONKIT_E_INPUT, path, line, 0, "...", ...)`. */
int ak_err_set(ak_error *err, int code, const char *file, long line, long column,
               const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;

/* Records an out-of-memory failure and returns ANONKIT_E_NOMEM. */
int ak_err_nomem(ak_error *err);

/* A value of the data as a message can show it whole: data[0..len) into buf
 * with printable bytes as they are (UTF-8 too), a NUL as \0, other control
 * bytes as \xNN and a backslash as \\; cut to at most `shown` bytes of the
 * value, then "...". Returns buf. AK_SHOW(data, len) does this into a
 * buffer of its own (a compound literal, living to the end of the block). */
const char *ak_escape(const char *data, size_t len, size_t shown, char *buf, size_t size);
#define AK_SHOW_SIZE 400
#define AK_SHOW(data, len) ak_escape((data), (len), 80, (char[AK_SHOW_SIZE]){0}, AK_SHOW_SIZE)

/* Formats err as "FILE:LINE: message" (or just the message) into buf. */
void ak_err_format(const ak_error *err, char *buf, size_t size);

/* Propagates a negative status from a call. */
#define AK_CHECK(expr)                 \
    do {                               \
        int ak__rc = (expr);           \
        if (ak__rc < 0) return ak__rc; \
    } while (0)

#endif
