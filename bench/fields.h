/*
 * One field of the benchmarks' files, as CSV (RFC 4180) and JSON write it, for every
 * writer: rdlm-bench's --csv and --json files and the MPI programs' --csv and --json
 * output. Not thread-safe on one f (stdio).
 */
#ifndef RDLM_BENCH_FIELDS_H
#define RDLM_BENCH_FIELDS_H

#include <stdio.h>

/**
 * Write text as one CSV field on f: as it is, or, when it holds a comma, a double
 * quote, a CR or a LF, between double quotes with each double quote doubled
 * ("segment, 1e6 locks" -> "\"segment, 1e6 locks\""). No separator is written.
 */
void rdlm_bench_csv_field(FILE *f, const char *text);

/** Write v (%.6g) as one CSV field on f; NaN is the empty field. */
void rdlm_bench_csv_num(FILE *f, double v);

/** Write text as one JSON string on f: between double quotes, with double quotes and
 *  backslashes escaped and control characters as \uXXXX. */
void rdlm_bench_json_str(FILE *f, const char *text);

/** Write v (%.6g) as one JSON number on f; NaN and infinities are null. */
void rdlm_bench_json_num(FILE *f, double v);

/** Write the member "key": "text" on f, then ", " when comma. */
void rdlm_bench_json_kv(FILE *f, const char *key, const char *text, int comma);

/** Write the member "key": v on f (rdlm_bench_json_num), then ", " when comma. */
void rdlm_bench_json_kn(FILE *f, const char *key, double v, int comma);

#endif
