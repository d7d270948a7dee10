/*
 * The health of a replica's data directory (disk.c), so that libraft never meets a
 * full, read-only or vanished disk: libraft 0.15 has no safe path for a failed write
 * (a leader whose log append fails aborts with a double free inside the library; a
 * data directory too small for its first open segment leaves a leader that is never
 * ready, silently).
 *
 * What libraft writes (measured with raft_uv 0.15): open log segments of a fixed size,
 * preallocated (a pool of up to 3; a new one each time one fills), metadata files of
 * 32 bytes on term and vote changes, and a snapshot every snapshot_threshold entries.
 * The replica sets the segment size to RDLM_LEASE_DISK_SEGMENT and keeps
 * RDLM_LEASE_DISK_RESERVE free for what libraft may write next (the next segments
 * and a snapshot): below it the disk is "low" and the replica writes no entry.
 *
 * States, from one sample (statvfs and stat of the directory, no write):
 *   OK        writable, at least the reserve free
 *   LOW       free < reserve
 *   READONLY  the file system is mounted read-only, or the directory not writable
 *   GONE      the directory no longer exists, or is another one than at start (a
 *             directory recreated in its place lacks this replica's log)
 */
#ifndef RDLM_LEASE_DISK_H
#define RDLM_LEASE_DISK_H

#include <limits.h>
#include <stdint.h>

#include <sys/types.h>

#include <rdlm/status.h>

/** raft_uv segment size the replica sets (libraft's default is 8 MiB). */
#define RDLM_LEASE_DISK_SEGMENT (1024u * 1024u)
/** Free bytes below which the disk is low (two segments and a snapshot). */
#define RDLM_LEASE_DISK_RESERVE (4u * 1024u * 1024u)
/** The file in the data directory a replica holds an exclusive flock on (and writes
 *  its pid into) from open to close: one replica per data directory. */
#define RDLM_LEASE_DISK_LOCK "rdlm.lock"
/** Free bytes a replica needs to start: libraft's 3 open segments and the reserve. */
#define RDLM_LEASE_DISK_START (3u * RDLM_LEASE_DISK_SEGMENT + RDLM_LEASE_DISK_RESERVE)

typedef enum rdlm_lease_disk_state {
    RDLM_LEASE_DISK_OK = 0,
    RDLM_LEASE_DISK_LOW,
    RDLM_LEASE_DISK_READONLY,
    RDLM_LEASE_DISK_GONE
} rdlm_lease_disk_state_t;

typedef struct rdlm_lease_disk {
    char dir[PATH_MAX]; /* the replica's data_dir */
    dev_t dev;          /* the directory's identity at start */
    int lock_fd;        /* RDLM_LEASE_DISK_LOCK, flock()ed while the replica lives */
    ino_t ino;
    rdlm_lease_disk_state_t state; /* of the last sample */
    uint64_t free_bytes;           /* of the last sample (0 unless OK or LOW) */
} rdlm_lease_disk_t;

/**
 * Check dir before libraft opens it: an existing, writable directory on a read-write
 * file system with at least RDLM_LEASE_DISK_START bytes free, that no other replica
 * (of any process) holds; then hold it (RDLM_LEASE_DISK_LOCK, close-on-exec) until
 * rdlm_lease_disk_close. RDLM_OK (d set up with a copy of dir, state OK), RDLM_ERR_IO
 * (missing, not a directory, read-only, not writable, a path of PATH_MAX bytes or
 * more, a lock file that cannot be opened), RDLM_ERR_BUSY (another replica holds it)
 * or RDLM_ERR_NO_SPACE (too small or too full), each logged at error with the
 * directory and, for space, what it has and what is needed, for a holder its pid.
 * Nothing is held unless RDLM_OK. Blocking (a few system calls).
 */
rdlm_status_t rdlm_lease_disk_open(rdlm_lease_disk_t *d, const char *dir);

/** The file naming the replica id a data directory belongs to ("<id>\n"). */
#define RDLM_LEASE_DISK_ID "replica-id"

/**
 * Check that d's directory (held) belongs to replica id: its RDLM_LEASE_DISK_ID names
 * id; or it has none (a new directory, or one made before the file existed) and then
 * records id (synced). RDLM_OK; RDLM_ERR_MISMATCH (another id's: its votes and log
 * would be taken for this replica's, a vote given twice; logged with both ids);
 * RDLM_ERR_CORRUPT (not an id) or RDLM_ERR_IO, logged. Blocking (a few system calls).
 */
rdlm_status_t rdlm_lease_disk_own(rdlm_lease_disk_t *d, uint64_t id);

/** Let go of the directory held by rdlm_lease_disk_open (another replica may take it).
 *  The lock file stays. */
void rdlm_lease_disk_close(rdlm_lease_disk_t *d);

/**
 * Sample d's directory and return its state (also in d->state). The first sample of
 * an episode in a state other than OK logs its cause at warn, the return to OK logs
 * at info: one line per change, none per sample. Blocking (two system calls, no
 * write); call it on a timer, not per request.
 */
rdlm_lease_disk_state_t rdlm_lease_disk_sample(rdlm_lease_disk_t *d);

/** "ok", "low", "read-only", "gone". */
const char *rdlm_lease_disk_state_name(rdlm_lease_disk_state_t state);

#endif
