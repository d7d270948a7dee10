/*
 * Alternating rounds: every round measures every implementation once, in forward
 * order on even rounds and in reverse order on odd ones (A B C, C B A, ...), so on a
 * noisy shared machine no side always runs first or last, and medians over rounds
 * compare like with like.
 */
#ifndef RDLM_BENCH_ROUNDS_H
#define RDLM_BENCH_ROUNDS_H

#include <stdint.h>

/** Measure implementation impl in round round; 0 or -1 (stops the rounds). */
typedef int (*rdlm_bench_round_func_t)(uint32_t impl, uint32_t round, void *ctx);

/** Run nimpl x rounds measurements in alternating order; 0 or the first -1. */
int rdlm_bench_alternate(uint32_t nimpl, uint32_t rounds, rdlm_bench_round_func_t fn,
                         void *ctx);

#endif
