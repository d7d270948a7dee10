/*
 * The per-node shared segment of one user's job: create, attach, stale replacement,
 * process slots, detach. The segment and its lock file live in the user's private
 * directory (place.h). Every decision is taken under an flock on the per-job lock
 * file, so create/replace/remove never race. Every attached context keeps the
 * segment's file open with a shared flock: a segment is replaced or removed only when
 * an exclusive flock on it succeeds, i.e. when no process is attached, whatever its
 * header says.
 */
#ifndef RDLM_SEGMENT_H
#define RDLM_SEGMENT_H

#include <stdint.h>

#include <rdlm/status.h>

#include "layout.h"
#include "place.h"
#include "shared.h"

/** A process's view of the segment, and its own slot in it. The pointers and bounds
 *  are private copies checked at attach: a later scribble on the shared header cannot
 *  move them. */
typedef struct rdlm_segment {
    rdlm_seg_header_t *hdr;
    rdlm_slot_t *slots;
    rdlm_entry_t *entries;
    char (*names)[RDLM_NAME_BYTES];
    uint32_t max_procs;  /* slots */
    uint32_t table_size; /* entries */
    int fd;              /* the segment file, held with LOCK_SH while attached */
    uint32_t self_slot;  /* index of this context's slot */
    uint32_t self_owner; /* owner word naming this context */
    int created;         /* this attach created the segment */
    int replaced_stale;  /* ... replacing a stale one */
    int keep_stale;      /* judge only: a stale segment is not unlinked (a dry run) */
    int dir_fd;          /* place.dir, open while attaching, detaching or reaping */
    rdlm_place_t place;  /* the directory of the segment and its lock file (place.h) */
    char seg_name[RDLM_PLACE_NAME_BYTES];  /* "<job>.seg" in place.dir */
    char lock_name[RDLM_PLACE_NAME_BYTES]; /* "<job>.lock" in place.dir */
    unsigned planted; /* planted bugs of the table (table.c), tests only: below */
    struct rdlm_alive *alive; /* this process's pidfds of the slots' processes
                                 (alive.h); NULL: liveness read from /proc */
} rdlm_segment_t;

/* Planted bugs (set from the environment at attach; tests only, table.c):
 * RDLMTEST_TABLE_NO_FLOOR: a keyed entry's tokens start at the epoch, not above its
 * name's floor; RDLMTEST_TABLE_RETIRE_OPEN: a close retires an idle entry that other
 * handles still have open. */
#define RDLM_PLANTED_NO_FLOOR 1u
#define RDLM_PLANTED_RETIRE_OPEN 2u

/** Creation parameters; only the creator's count. */
typedef struct rdlm_segment_params {
    const char *job;
    const char *dir; /* the place's directory (RDLM_SHM_DIR); NULL or "": the default */
    uint32_t capacity;
    uint32_t max_procs;
    uint32_t epoch; /* token epoch of a segment this call creates (1..RDLM_EPOCH_MAX,
                       above the stale one's); 0: a new host epoch (epoch.h) */
} rdlm_segment_params_t;

/**
 * Attach to the segment of job for the calling user, and claim a process slot.
 * Blocking. An existing segment is replaced only if no process holds it (the flock)
 * and its header is unusable or no slot is held by a live process. On success fills
 * *seg_p. Errors: RDLM_ERR_PERMISSION (another uid's or group/other-accessible file or
 * directory, a symlink: place.h), RDLM_ERR_BAD_CONFIG (dir is not absolute),
 * RDLM_ERR_CORRUPT (the header or size disagrees with the layout while processes are
 * attached: nothing is replaced), RDLM_ERR_NO_RESOURCE (no free slot), RDLM_ERR_IO,
 * RDLM_ERR_NO_MEMORY.
 */
rdlm_status_t rdlm_segment_attach(const rdlm_segment_params_t *params,
                                  rdlm_segment_t *seg_p);

/** Free the slot and close the segment file; remove the segment and its lock file if
 *  no process is attached any more (the same test as attach's replacement). The
 *  directory stays (created once, it keeps the user's name from being squatted). */
void rdlm_segment_detach(rdlm_segment_t *seg);

/** 1 if the owner word names a slot whose process is alive (slow: reads /proc). */
int rdlm_segment_owner_alive(const rdlm_segment_t *seg, uint32_t owner);
/** The lease session id the process of owner word `owner` published (0: none, nobody,
 *  or the slot went to another process since). */
uint64_t rdlm_segment_owner_session(const rdlm_segment_t *seg, uint32_t owner);
/** Publish this context's lease session id in its slot (0: none). */
void rdlm_segment_set_session(rdlm_segment_t *seg, uint64_t session);

/** Number of slots held by live processes (slow). */
uint32_t rdlm_segment_live_procs(const rdlm_segment_t *seg);

/** 1 + the highest slot index ever claimed, clamped to the slot count: the bound of
 *  every loop over slots (the shared word may have been scribbled on). */
static inline uint32_t rdlm_segment_hwm(const rdlm_segment_t *seg)
{
    uint32_t hwm = rdlm_load(&seg->hdr->slot_hwm, RDLM_ACQUIRE);

    return hwm < seg->max_procs ? hwm : seg->max_procs;
}

/** What rdlm_segment_reap found for one job's segment and lock file. */
typedef enum rdlm_segment_reap {
    RDLM_SEGMENT_REAP_REMOVED, /* no live process: removed (a dry run: would be) */
    RDLM_SEGMENT_REAP_IN_USE,  /* kept: live processes are attached */
    RDLM_SEGMENT_REAP_BUSY,    /* kept: a process holds the lock file (attaching or
                                  detaching right now) */
    RDLM_SEGMENT_REAP_REFUSED, /* kept: not this user's, or unreadable (logged) */
} rdlm_segment_reap_t;

/**
 * Remove the calling user's segment and lock file of job in place if no live process is
 * attached: the judgement of attach's replacement, under the lock file's flock (not
 * waited for). With dry_run nothing is removed; a lock file this call had to create
 * is removed again whatever it found. *live_p: the live processes of a kept segment
 * in use, else 0. Blocking (reads /proc); of two concurrent calls on one job, one may
 * report BUSY.
 */
RDLM_SHARED rdlm_segment_reap_t rdlm_segment_reap(const rdlm_place_t *place,
                                                  const char *job, int dry_run,
                                                  uint32_t *live_p);

/** Bytes a segment of this capacity and slot count occupies. */
RDLM_SHARED uint64_t rdlm_segment_bytes(uint32_t capacity, uint32_t max_procs);

#endif
