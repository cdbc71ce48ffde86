/* locale.c (api) — the C numeric locale for the duration of a public call
 * (locale.h). */
#include "api/locale.h"

void ak_c_numeric_enter(ak_c_numeric *scope)
{
    scope->c = (locale_t)0;
    scope->previous = uselocale((locale_t)0);
    /* newlocale modifies (or frees) its base: start from a copy of the thread's */
    locale_t base = duplocale(scope->previous);
    if (base == (locale_t)0) return;
    locale_t c = newlocale(LC_NUMERIC_MASK, "C", base);
    if (c == (locale_t)0) {
        freelocale(base);
        return;
    }
    scope->c = c;
    uselocale(c);
}

void ak_c_numeric_leave(ak_c_numeric *scope)
{
    if (scope->c == (locale_t)0) return;
    uselocale(scope->previous);
    freelocale(scope->c);
    scope->c = (locale_t)0;
}
