/*
 * CSV fields as RFC 4180 writes them, for every CSV writer of the benchmarks
 * (rdlm-bench --csv, the MPI programs' --csv).
 */
#ifndef RDLM_BENCH_CSV_H
#define RDLM_BENCH_CSV_H

#include <stdio.h>

/**
 * Write text as one CSV field on f: as it is, or, when it holds a comma, a double
 * quote, a CR or a LF, between double quotes with each double quote doubled
 * ("segment, 1e6 locks" -> "\"segment, 1e6 locks\""). No separator is written.
 * Not thread-safe on one f (stdio).
 */
void rdlm_bench_csv_field(FILE *f, const char *text);

/** Write v (%.6g) as one CSV field on f; NaN is the empty field. */
void rdlm_bench_csv_num(FILE *f, double v);

#endif
