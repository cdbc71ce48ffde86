/* readstat_load.h — ReadStat (libreadstat) loaded at run time, only when an
 * SPSS, Stata or SAS file is read or written (io/source_readstat.c;
 * io/dl_load.h), so that starting anonkit does not load it; the functions
 * are looked up into an rs_api that the user keeps in its own struct. */
#ifndef ANONKIT_IO_RS_LOAD_H
#define ANONKIT_IO_RS_LOAD_H

#include <readstat.h>

#include "io/dl_load.h"

/* The soname looked for, of the Debian/Ubuntu package libreadstat1. */
#define RS_SONAME "libreadstat.so.1"

/* Every libreadstat function anonkit calls; X(name) once each. */
#define RS_API_FUNCTIONS(X) \
    X(readstat_add_label_set) X(readstat_add_variable) X(readstat_begin_row) X(readstat_begin_writing_dta) \
    X(readstat_begin_writing_sav) X(readstat_begin_writing_xport) X(readstat_double_value) X(readstat_end_row) \
    X(readstat_end_writing) X(readstat_error_message) X(readstat_insert_double_value) \
    X(readstat_insert_missing_value) X(readstat_insert_string_value) X(readstat_label_double_value) \
    X(readstat_label_int32_value) X(readstat_parse_dta) X(readstat_parse_por) X(readstat_parse_sas7bdat) \
    X(readstat_parse_sav) X(readstat_parse_xport) X(readstat_parser_free) X(readstat_parser_init) \
    X(readstat_set_data_writer) X(readstat_set_error_handler) X(readstat_set_handler_character_encoding) \
    X(readstat_set_value_handler) X(readstat_set_value_label_handler) X(readstat_set_variable_handler) \
    X(readstat_string_value) X(readstat_validate_metadata) X(readstat_validate_variable) \
    X(readstat_value_is_missing) X(readstat_value_is_tagged_missing) X(readstat_value_type_class) \
    X(readstat_variable_get_index) X(readstat_variable_get_label) X(readstat_variable_get_name) \
    X(readstat_variable_get_storage_width) X(readstat_variable_get_type_class) X(readstat_variable_set_label) \
    X(readstat_variable_set_label_set) X(readstat_writer_free) X(readstat_writer_init) \
    X(readstat_writer_set_compression) X(readstat_writer_set_error_handler) \
    X(readstat_writer_set_file_format_version)

/* The loaded library and its functions, called as api->name(...), with the
 * very types of the library's header. */
typedef struct rs_api {
    void *lib; /* the dlopen handle */
#define RS_API_FIELD(name) __typeof__(name) *name;
    RS_API_FUNCTIONS(RS_API_FIELD)
#undef RS_API_FIELD
} rs_api;

/* Loads libreadstat (soname: RS_SONAME but for the tests) and fills *api.
 * Missing, or without one of the functions: ANONKIT_E_IO with a message,
 * about `shown`, naming the package to install, and *api zeroed. */
int rs_api_open(rs_api *api /* OUT */, const char *soname, const char *shown, ak_error *err);

/* Lets go of rs_api_open's handle (no-op on a zeroed api). */
void rs_api_close(rs_api *api);

#endif
