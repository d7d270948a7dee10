/*
 * Token epochs issued without a lease authority: a per-user file on this host that
 * only grows.
 *
 * A token is epoch << 40 | sequence, and a lock's sequence starts again in every new
 * segment and every new job, so the epoch alone orders the tokens of two segments or
 * two jobs. Without an authority the epoch is taken from /var/tmp/rdlm-<uid>.epoch:
 *
 *   next = max(last + 1, clock epoch)      clock epoch: rdlm_clock_epoch
 *
 * written back under an fcntl lock before it is used. So every epoch taken on one
 * host is larger than every one taken there before: two jobs started in the same
 * second, a segment removed and re-created, a clock stepped backwards. The clock
 * floor orders epochs taken on different hosts only as far as their clocks agree to
 * the minute, which is why jobs that share a resource across hosts need an authority
 * (RDLM_AUTHORITY) for a guarantee (docs/distributed-locks.md, "Tokens").
 */
#ifndef RDLM_EPOCH_H
#define RDLM_EPOCH_H

#include <stdint.h>
#include <time.h>

#include "clock.h"
#include "rdlm.h"

#define RDLM_EPOCH_MAX RDLM_CLOCK_EPOCH_MAX

/** The next epoch after last for clock epoch floor: max(last + 1, floor). Pure;
 *  0 when it would pass RDLM_EPOCH_MAX. */
uint32_t rdlm_epoch_after(uint32_t last, uint32_t floor);

/**
 * Take the next epoch of the file at path (created 0600 if missing; it must belong
 * to this user and be private) for clock epoch floor, and record it there (fdatasync)
 * before returning it in *epoch_p. Blocking (an fcntl lock, so it also serialises
 * hosts that share path on a file system with locks; waited for at most 5 s:
 * RDLM_ERR_BUSY). Errors, logged:
 * RDLM_ERR_PERMISSION (another user's file, a symlink, group or other access),
 * RDLM_ERR_IO (open, lock, read or write failed), RDLM_ERR_CORRUPT (the file does
 * not hold an epoch), RDLM_ERR_QUOTA (the epoch space is used up); *epoch_p is then 0.
 */
rdlm_status_t rdlm_epoch_take(const char *path, uint32_t floor, uint32_t *epoch_p);

/** The default file, /var/tmp/rdlm-<uid>.epoch, into buf (at least 64 bytes). */
void rdlm_epoch_default_path(char *buf, size_t len);

/**
 * The epoch for a new segment or job on this host: rdlm_epoch_take of the default
 * file at the current clock. If the file cannot be used, a warning says that tokens
 * may then repeat across jobs, and the clock epoch is returned. Never 0. Blocking.
 */
uint32_t rdlm_epoch_host(void);

#endif
