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
