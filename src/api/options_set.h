/* options_set.h (api) — the setters of the option table (options.c): each
 * parses one option's value text and stores it in the job, or leaves a usage
 * error naming the option. Internal to src/api. */
#ifndef AK_API_OPTIONS_SET_H
#define AK_API_OPTIONS_SET_H

#include "api/options.h"

int opt_set_algorithm(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_alpha(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_anonymity(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_beta(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_beta_variant(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_bits(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_block_size(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_c(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_centers(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_choose(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_delimiter(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_delta_disclosure(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_fcache(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_flag(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_growth_depth(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_hierarchy(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_incognito_variant(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_int_flag(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_interval_format(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_job(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_k(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_keep_order(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_kl_level(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_l(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_l_variant(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_linkability(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_max_risk(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_memory(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_min_gain(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_names(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_population_size(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_previous(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_publish(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_risk_flag(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_sample_size(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_sampling_fraction(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_score(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_seed(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_split(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_suda(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_suppression(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_t(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_t_distance(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_test(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_text(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_threads(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_threshold(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_train_rows(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_variance(anonkit_job *job, const ak_option_desc *d, const char *value);
int opt_set_weights(anonkit_job *job, const ak_option_desc *d, const char *value);

#endif
