/* version.c — the version of the library itself (anonkit_version_number,
 * anonkit_version_string), as opposed to the macros of the headers a program
 * was compiled with; both come from project(anonkit VERSION ...). */
#include "anonkit/anonkit.h"

unsigned long anonkit_version_number(void)
{
    return ANONKIT_VERSION_NUMBER;
}

const char *anonkit_version_string(void)
{
    return ANONKIT_VERSION;
}
