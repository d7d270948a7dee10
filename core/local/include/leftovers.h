/*
 * What jobs leave in a place (place.h), by name: the calling user's segments
 * ("<job>.seg"; legacy "rdlm-<uid>-<job>") and their lock files ("<job>.lock"), the
 * name of a distributed context's node segment, and the sweep after an attach that
 * removes those of jobs whose processes all died (a kill -9 of the last one). Whether
 * a segment is in use is rdlm_segment_reap's judgement (segment.h), never decided
 * here.
 */
#ifndef RDLM_LEFTOVERS_H
#define RDLM_LEFTOVERS_H

#include <stddef.h>
#include <stdint.h>

#include "place.h"
#include "shared.h"

/* Bytes of a segment's job name and its NUL: up to 44 fit a place's names. */
#define RDLM_LEFTOVERS_JOB 45
#define RDLM_LEFTOVERS_SWEEP_MAX 4096 /* directory entries the sweep looks at */

/** Called with each job name found; return nonzero to stop. */
typedef int (*rdlm_leftovers_func_t)(const char *job, void *arg);

/**
 * Write into buf the job name of the segment of one (virtual) node of a distributed
 * context: "<first 20 bytes of job>.<ctx_id, 16 hex digits>.n<node>". Never fails.
 */
void rdlm_leftovers_node_job(char *buf, size_t len, const char *job, uint64_t ctx_id,
                             uint32_t node);

/** 1 if seg_job names a segment of job: job itself, or a node segment of one of its
 *  distributed contexts (rdlm_leftovers_node_job); else 0. Node segments keep 20
 *  bytes of the job: jobs whose names share those match each other's. */
RDLM_SHARED int rdlm_leftovers_job_matches(const char *seg_job, const char *job);

/**
 * Call func once per job that has a lock file of the calling user in place, and with
 * lone also per job that has only a segment (rdlm itself never leaves one: its lock
 * file goes last), looking at up to max_entries directory entries (0: all). Returns
 * the number of calls: 0 if the place's directory does not exist; -1 if it cannot be
 * read or is refused (logged: rdlm_place_open). Blocking; files that come and go
 * meanwhile may be missed or reported.
 */
RDLM_SHARED int rdlm_leftovers_each(const rdlm_place_t *place, unsigned max_entries,
                                    int lone, rdlm_leftovers_func_t func, void *arg);

/** After an attach: rdlm_segment_reap every other job of this user with a lock file
 *  among the first RDLM_LEFTOVERS_SWEEP_MAX entries of place (an info line for each
 *  removal). */
void rdlm_leftovers_sweep(const rdlm_place_t *place, const char *own_job);

#endif
