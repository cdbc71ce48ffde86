/* locale.h (api) — the public entry points run in the C numeric locale
 * whatever locale the embedding program chose (setlocale(LC_ALL, "") with a
 * decimal comma would otherwise make strtod read "0.05" as 0 and printf write
 * "0,05"). The switch is per thread (uselocale), so concurrent jobs on other
 * threads and the caller's own locale are untouched; it lasts from
 * ak_c_numeric_enter to ak_c_numeric_leave. The worker threads a call starts
 * (common/parallel.h: ak_thread_create) take the calling thread's locale. */
#ifndef AK_API_LOCALE_H
#define AK_API_LOCALE_H

#include <locale.h>

typedef struct ak_c_numeric {
    locale_t c;        /* the caller's locale with LC_NUMERIC "C" ((locale_t)0: no switch) */
    locale_t previous; /* the calling thread's locale before the switch */
} ak_c_numeric;

/* Switches the calling thread to its locale with LC_NUMERIC "C". When the
 * locale cannot be made (out of memory) the thread keeps its locale. */
void ak_c_numeric_enter(ak_c_numeric *scope);

/* Restores the calling thread's locale and frees the one enter made. */
void ak_c_numeric_leave(ak_c_numeric *scope);

#endif
