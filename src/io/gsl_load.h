/* gsl_load.h — GSL (libgsl) loaded at run time, only by the runs that call
 * its quantile functions: the hypothesis tests of Rothko-S
 * (model/sampletest.c) and the normal salaries of `anonkit generate`
 * (io/synth.c); io/dl_load.h. Linked, libgsl and the libgslcblas it needs
 * were loaded and relocated by every anonkit process at start, a cost a
 * run such as `anonkit risk` on a small file paid for nothing. The
 * functions are looked up into a gsl_api that the user keeps in its own
 * struct or locals. */
#ifndef ANONKIT_IO_GSL_LOAD_H
#define ANONKIT_IO_GSL_LOAD_H

#include <gsl/gsl_cdf.h>

#include "io/dl_load.h"

/* The soname looked for, of the Debian/Ubuntu package libgsl27. */
#define GSL_SONAME "libgsl.so.27"

/* Every GSL function anonkit calls; X(name) once each. */
#define GSL_API_FUNCTIONS(X) X(gsl_cdf_chisq_Qinv) X(gsl_cdf_ugaussian_Pinv) X(gsl_cdf_ugaussian_Qinv)

/* The loaded library and its functions, called as api->name(...), with the
 * very types of the library's header. */
typedef struct gsl_api {
    void *lib; /* the dlopen handle */
#define GSL_API_FIELD(name) __typeof__(name) *name;
    GSL_API_FUNCTIONS(GSL_API_FIELD)
#undef GSL_API_FIELD
} gsl_api;

/* Loads GSL and fills *api. Missing, or without one of the functions:
 * ANONKIT_E_IO with a message naming the package to install, and *api
 * zeroed. */
int gsl_api_open(gsl_api *api /* OUT */, ak_error *err);

/* Lets go of gsl_api_open's handle (no-op on a zeroed api). */
void gsl_api_close(gsl_api *api);

#endif
