/* error.c — filling and formatting the error record (docs/ARCHITECTURE.md §11). */
#include "common/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void ak_err_clear(ak_error *err)
{
    if (!err) return;
    err->code = ANONKIT_OK;
    err->file[0] = '\0';
    err->line = 0;
    err->column = 0;
    err->message[0] = '\0';
}

int ak_err_set(ak_error *err, int code, const char *file, long line, long column,
               const char *fmt, ...)
{
    if (!err) return code;
    err->code = code;
    snprintf(err->file, sizeof err->file, "%s", file ? file : "");
    err->line = line;
    err->column = column;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return code;
}

int ak_err_nomem(ak_error *err)
{
    return ak_err_set(err, ANONKIT_E_NOMEM, NULL, 0, 0, "out of memory");
}

void ak_err_format(const ak_error *err, char *buf, size_t size)
{
    if (err->file[0] && err->line > 0)
        snprintf(buf, size, "%s:%ld: %s", err->file, err->line, err->message);
    else if (err->file[0])
        snprintf(buf, size, "%s: %s", err->file, err->message);
    else
        snprintf(buf, size, "%s", err->message);
}

const char *ak_escape(const char *data, size_t len, size_t shown, char *buf, size_t size)
{
    static const char hex[] = "0123456789abcdef";
    size_t at = 0;
    size_t i = 0;
    for (; i < len && i < shown; i++) {
        const unsigned char ch = (unsigned char)data[i];
        char piece[5];
        size_t n = 0;
        if (ch == 0) {
            piece[n++] = '\\';
            piece[n++] = '0';
        } else if (ch == '\\') {
            piece[n++] = '\\';
            piece[n++] = '\\';
        } else if (ch < 0x20 || ch == 0x7f) {
            piece[n++] = '\\';
            piece[n++] = 'x';
            piece[n++] = hex[ch >> 4];
            piece[n++] = hex[ch & 15];
        } else {
            piece[n++] = (char)ch;
        }
        if (at + n + 4 > size) break; /* room for "..." and the NUL */
        memcpy(buf + at, piece, n);
        at += n;
    }
    if (i < len && at + 4 <= size) {
        memcpy(buf + at, "...", 3);
        at += 3;
    }
    buf[at < size ? at : size - 1] = '\0';
    return buf;
}
