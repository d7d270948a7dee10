/* The per-node shared segment: create, attach, replace stale, detach (segment.h). */
#include "segment.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alive.h"
#include "epoch.h"
#include "leftovers.h"
#include "log.h"
#include "mapping.h"
#include "proc.h"

#define RDLM_HEADER_BYTES 4096u
_Static_assert(sizeof(rdlm_seg_header_t) <= RDLM_HEADER_BYTES, "the header fits its page");
#define RDLM_SEG_CAPACITY_MAX (RDLM_ENTRY_INDEX_MAX / 2) /* rdlm_ctx_create's bound */
#define RDLM_WHY_BYTES 128                               /* what is wrong with a header */

typedef struct rdlm_seg_layout {
    uint64_t slots_offset, entries_offset, names_offset, bytes;
    uint32_t table_size;
} rdlm_seg_layout_t;

static uint64_t rdlm_align_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

static rdlm_seg_layout_t rdlm_segment_layout(uint32_t capacity, uint32_t max_procs)
{
    rdlm_seg_layout_t l;

    l.table_size = (uint32_t)((uint64_t)capacity * 10 / 9 + 1);
    l.slots_offset = RDLM_HEADER_BYTES;
    l.entries_offset =
        rdlm_align_up(l.slots_offset + (uint64_t)max_procs * sizeof(rdlm_slot_t), 4096);
    l.names_offset = l.entries_offset + (uint64_t)l.table_size * sizeof(rdlm_entry_t);
    l.bytes =
        rdlm_align_up(l.names_offset + (uint64_t)l.table_size * RDLM_NAME_BYTES, 4096);
    return l;
}

uint64_t rdlm_segment_bytes(uint32_t capacity, uint32_t max_procs)
{
    return rdlm_segment_layout(capacity, max_procs).bytes;
}

/* The file name of seg's place open on fd must be ours and private: refuse anything
 * else. Fills *st_p. */
static rdlm_status_t rdlm_segment_check_owner(const rdlm_segment_t *seg, int fd,
                                              const char *name, struct stat *st_p)
{
    if (fstat(fd, st_p) != 0) {
        rdlm_error("fstat(%s/%s): %s", seg->place.dir, name, strerror(errno));
        return RDLM_ERR_IO;
    }
    if (!S_ISREG(st_p->st_mode) || st_p->st_uid != geteuid() ||
        (st_p->st_mode & 077) != 0) {
        rdlm_error("%s/%s belongs to uid %u with mode %06o: refusing (expected uid %u, a "
                   "regular file, 0600)",
                   seg->place.dir, name, (unsigned)st_p->st_uid, (unsigned)st_p->st_mode,
                   (unsigned)geteuid());
        return RDLM_ERR_PERMISSION;
    }
    return RDLM_OK;
}

/* The status of a failed open of name in seg's place, after one error line: a symlink
 * (ELOOP with O_NOFOLLOW) or a file we may not open is RDLM_ERR_PERMISSION. */
static rdlm_status_t rdlm_segment_open_failed(const rdlm_segment_t *seg, const char *name,
                                              int err)
{
    rdlm_error("open(%s/%s): %s%s", seg->place.dir, name, strerror(err),
               err == ELOOP ? " (a symlink: refused)" : "");
    return (err == EACCES || err == ELOOP) ? RDLM_ERR_PERMISSION : RDLM_ERR_IO;
}

/* Open and flock (LOCK_EX | nb) the job's lock file; retry if the last detacher
 * unlinked it between our open and our flock. Returns the fd, or -1 with *status_p
 * (RDLM_ERR_BUSY: nb and another process holds it). */
static int rdlm_segment_lock_as(const rdlm_segment_t *seg, int nb, rdlm_status_t *status_p)
{
    for (int attempt = 0; attempt < 100; attempt++) {
        struct stat by_fd, by_path;
        int fd = openat(seg->dir_fd, seg->lock_name,
                        O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

        if (fd < 0) {
            *status_p = rdlm_segment_open_failed(seg, seg->lock_name, errno);
            return -1;
        }
        *status_p = rdlm_segment_check_owner(seg, fd, seg->lock_name, &by_fd);
        if (*status_p != RDLM_OK) {
            close(fd);
            return -1;
        }
        while (flock(fd, LOCK_EX | nb) != 0) {
            if (errno != EINTR) {
                close(fd);
                *status_p = RDLM_ERR_BUSY;
                return -1;
            }
        }
        if (fstat(fd, &by_fd) == 0 &&
            fstatat(seg->dir_fd, seg->lock_name, &by_path, AT_SYMLINK_NOFOLLOW) == 0 &&
            by_fd.st_ino == by_path.st_ino && by_fd.st_dev == by_path.st_dev) {
            return fd;
        }
        close(fd); /* unlinked under us: take the new one */
    }
    rdlm_error("%s/%s keeps being replaced; giving up", seg->place.dir, seg->lock_name);
    *status_p = RDLM_ERR_IO;
    return -1;
}

static int rdlm_segment_lock(const rdlm_segment_t *seg, rdlm_status_t *status_p)
{
    return rdlm_segment_lock_as(seg, 0, status_p);
}

/* Release the lock file's flock and close it. The flock belongs to the open file, which
 * a child forked meanwhile by another thread shares: a close alone left the lock held
 * as long as that child lived, and every attach and detach of the job waited for it
 * (an outside user's fork-without-exec worker pool). */
static void rdlm_segment_unlock(int lock_fd)
{
    flock(lock_fd, LOCK_UN);
    close(lock_fd);
}

/* Point seg's private views into the mapping at base, from the layout recomputed from
 * capacity and slot count (never from the shared header's offsets). */
static void rdlm_segment_map_views(rdlm_segment_t *seg, void *base, uint32_t max_procs,
                                   const rdlm_seg_layout_t *l)
{
    seg->hdr = base;
    seg->slots = (rdlm_slot_t *)((char *)base + l->slots_offset);
    seg->entries = (rdlm_entry_t *)((char *)base + l->entries_offset);
    seg->names = (char(*)[RDLM_NAME_BYTES])((char *)base + l->names_offset);
    seg->max_procs = max_procs;
    seg->table_size = l->table_size;
}

/* The given epoch, or one above every epoch taken on this host before (epoch.h); and
 * above the stale segment's in case the host's epoch file was removed. */
static uint32_t rdlm_segment_new_epoch(uint32_t given, uint32_t stale_epoch)
{
    uint32_t host = given != 0 ? given : rdlm_epoch_host();

    return stale_epoch >= host && stale_epoch < RDLM_EPOCH_MAX ? stale_epoch + 1 : host;
}

/* Create a fresh segment (the name must not exist) and hold it with LOCK_SH. */
static rdlm_status_t rdlm_segment_create(rdlm_segment_t *seg,
                                         const rdlm_segment_params_t *params,
                                         uint32_t stale_epoch)
{
    rdlm_seg_layout_t l = rdlm_segment_layout(params->capacity, params->max_procs);
    rdlm_seg_header_t *hdr;
    struct stat st;
    void *base;
    int fd;

    fd = openat(seg->dir_fd, seg->seg_name,
                O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        rdlm_error("open(%s/%s, O_CREAT|O_EXCL): %s", seg->place.dir, seg->seg_name,
                   strerror(errno));
        return RDLM_ERR_IO;
    }
    if (flock(fd, LOCK_SH | LOCK_NB) != 0) { /* a new inode: nobody else has it */
        rdlm_error("flock(%s/%s, LOCK_SH): %s", seg->place.dir, seg->seg_name,
                   strerror(errno));
        goto err_unlink;
    }
    if (ftruncate(fd, (off_t)l.bytes) != 0) {
        rdlm_error("ftruncate(%s/%s, %llu): %s", seg->place.dir, seg->seg_name,
                   (unsigned long long)l.bytes, strerror(errno));
        goto err_unlink;
    }
    if (fstat(fd, &st) != 0 || (base = rdlm_mapping_get(fd, &st, l.bytes)) == NULL) {
        rdlm_error("mmap(%s/%s): %s", seg->place.dir, seg->seg_name, strerror(errno));
        goto err_unlink;
    }
    hdr = base;
    hdr->layout = RDLM_SEG_LAYOUT;
    hdr->capacity = params->capacity;
    hdr->table_size = l.table_size;
    hdr->max_procs = params->max_procs;
    hdr->bytes = l.bytes;
    hdr->slots_offset = l.slots_offset;
    hdr->entries_offset = l.entries_offset;
    hdr->names_offset = l.names_offset;
    hdr->epoch = rdlm_segment_new_epoch(params->epoch, stale_epoch);
    hdr->creator_pid = (int32_t)getpid();
    hdr->creator_start = rdlm_proc_start_time(getpid());
    rdlm_store(&hdr->create_idx, RDLM_TABLE_NONE, RDLM_RELAXED);
    rdlm_store(&hdr->magic, RDLM_SEG_MAGIC, RDLM_RELEASE);
    rdlm_segment_map_views(seg, base, params->max_procs, &l);
    seg->fd = fd;
    seg->created = 1;
    rdlm_debug("created %s/%s: %u objects, %u slots, %llu bytes, epoch %u", seg->place.dir,
               seg->seg_name, params->capacity, params->max_procs,
               (unsigned long long)l.bytes, hdr->epoch);
    return RDLM_OK;

err_unlink:
    close(fd);
    unlinkat(seg->dir_fd, seg->seg_name, 0);
    return RDLM_ERR_IO;
}

/* 1 if the header's table size, offsets and size are those its capacity and slot count
 * imply; else 0, with the first that differs in why. */
static int rdlm_segment_layout_ok(const rdlm_seg_header_t *h, char *why)
{
    rdlm_seg_layout_t l = rdlm_segment_layout(h->capacity, h->max_procs);
    const struct {
        const char *name;
        uint64_t have, want;
    } fields[] = {
        {"table size", h->table_size, l.table_size},
        {"slots offset", h->slots_offset, l.slots_offset},
        {"entries offset", h->entries_offset, l.entries_offset},
        {"names offset", h->names_offset, l.names_offset},
        {"size", h->bytes, l.bytes},
    };

    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        if (fields[i].have != fields[i].want) {
            snprintf(why, RDLM_WHY_BYTES,
                     "%s %#llx, expected %#llx for %u objects, %u slots", fields[i].name,
                     (unsigned long long)fields[i].have, (unsigned long long)fields[i].want,
                     h->capacity, h->max_procs);
            return 0;
        }
    }
    return 1;
}

/* Check a copy of the header: magic, layout version, bounds, the layout they imply,
 * the file's size. Returns 1 if usable; else 0, with what is wrong in why. */
static int rdlm_segment_header_ok(const rdlm_seg_header_t *h, off_t size, char *why)
{
    uint64_t magic = rdlm_load(&h->magic, RDLM_RELAXED);
    uint32_t hwm = rdlm_load(&h->slot_hwm, RDLM_RELAXED);

    if (magic != RDLM_SEG_MAGIC) {
        snprintf(why, RDLM_WHY_BYTES, "magic %#llx, expected %#llx",
                 (unsigned long long)magic, RDLM_SEG_MAGIC);
    } else if (h->layout != RDLM_SEG_LAYOUT) {
        snprintf(why, RDLM_WHY_BYTES, "layout version %u, this build's is %u", h->layout,
                 RDLM_SEG_LAYOUT);
    } else if (h->capacity > RDLM_SEG_CAPACITY_MAX || h->max_procs == 0 ||
               h->max_procs > RDLM_MAX_PROCS) {
        snprintf(why, RDLM_WHY_BYTES, "capacity %u or slot count %u out of range",
                 h->capacity, h->max_procs);
    } else if (!rdlm_segment_layout_ok(h, why)) {
        return 0;
    } else if (h->bytes != (uint64_t)size) {
        snprintf(why, RDLM_WHY_BYTES, "file of %lld bytes, header says %llu",
                 (long long)size, (unsigned long long)h->bytes);
    } else if (hwm > h->max_procs) {
        snprintf(why, RDLM_WHY_BYTES, "slot high-water mark %u above its %u slots", hwm,
                 h->max_procs);
    } else {
        return 1;
    }
    return 0;
}

/* Read the header of the segment open on fd into *h and check it (header_ok). */
static int rdlm_segment_read_header(int fd, const struct stat *st, rdlm_seg_header_t *h,
                                    char *why)
{
    if ((size_t)st->st_size < sizeof(*h) ||
        pread(fd, h, sizeof(*h), 0) != (ssize_t)sizeof(*h)) {
        snprintf(why, RDLM_WHY_BYTES, "file of %lld bytes holds no header",
                 (long long)st->st_size);
        return 0;
    }
    return rdlm_segment_header_ok(h, st->st_size, why);
}

/* Map the segment open on fd whose header copy *h passed the checks. Returns RDLM_OK,
 * RDLM_ERR_IO, or RDLM_ERR_CORRUPT (the magic vanished since the copy was read). */
static rdlm_status_t rdlm_segment_map(rdlm_segment_t *seg, int fd, const struct stat *st,
                                      const rdlm_seg_header_t *h)
{
    rdlm_seg_layout_t l = rdlm_segment_layout(h->capacity, h->max_procs);
    void *base = rdlm_mapping_get(fd, st, l.bytes);

    if (base == NULL) {
        rdlm_error("mmap(%s/%s): %s", seg->place.dir, seg->seg_name, strerror(errno));
        return RDLM_ERR_IO;
    }
    /* Acquire the creator's header writes through the mapping (its release store of
     * the magic), not only through the flock the kernel orders. */
    if (rdlm_load(&((rdlm_seg_header_t *)base)->magic, RDLM_ACQUIRE) != RDLM_SEG_MAGIC) {
        rdlm_mapping_put(base);
        return RDLM_ERR_CORRUPT;
    }
    rdlm_segment_map_views(seg, base, h->max_procs, &l);
    return RDLM_OK;
}

static int rdlm_slot_alive(const rdlm_segment_t *seg, const rdlm_slot_t *slot)
{
    return rdlm_load(&slot->state, RDLM_ACQUIRE) == RDLM_SLOT_ACTIVE &&
           rdlm_alive_check(seg->alive, (uint32_t)(slot - seg->slots),
                            rdlm_load(&slot->pid, RDLM_RELAXED),
                            rdlm_load(&slot->start_time, RDLM_RELAXED));
}

uint32_t rdlm_segment_live_procs(const rdlm_segment_t *seg)
{
    uint32_t hwm = rdlm_segment_hwm(seg), live = 0;

    for (uint32_t i = 0; i < hwm; i++) {
        live += (uint32_t)rdlm_slot_alive(seg, &seg->slots[i]);
    }
    return live;
}

int rdlm_segment_owner_alive(const rdlm_segment_t *seg, uint32_t owner)
{
    uint32_t idx = RDLM_OWNER_SLOT(owner);
    const rdlm_slot_t *slot;

    if (RDLM_OWNER_IS_NOBODY(owner) || idx >= seg->max_procs) {
        return 0;
    }
    slot = &seg->slots[idx];
    return RDLM_OWNER_MAKE(idx, rdlm_load(&slot->gen, RDLM_ACQUIRE)) == owner &&
           rdlm_slot_alive(seg, slot);
}

uint64_t rdlm_segment_owner_session(const rdlm_segment_t *seg, uint32_t owner)
{
    uint32_t idx = RDLM_OWNER_SLOT(owner);
    const rdlm_slot_t *slot;
    uint64_t session;

    if (RDLM_OWNER_IS_NOBODY(owner) || idx >= seg->max_procs) {
        return 0;
    }
    slot = &seg->slots[idx];
    session = rdlm_load(&slot->session, RDLM_ACQUIRE);
    /* The gen after the read: a slot claimed again meanwhile is not owner's. */
    return RDLM_OWNER_MAKE(idx, rdlm_load(&slot->gen, RDLM_ACQUIRE)) == owner ? session : 0;
}

void rdlm_segment_set_session(rdlm_segment_t *seg, uint64_t session)
{
    rdlm_store(&seg->slots[seg->self_slot].session, session, RDLM_RELEASE);
}

/* Claim a free slot, or one whose process died. Called under the flock. */
static rdlm_status_t rdlm_segment_claim_slot(rdlm_segment_t *seg)
{
    rdlm_seg_header_t *hdr = seg->hdr;
    uint32_t hwm = rdlm_segment_hwm(seg);

    for (uint32_t i = 0; i < seg->max_procs; i++) {
        rdlm_slot_t *slot = &seg->slots[i];

        if (i < hwm && rdlm_slot_alive(seg, slot)) {
            continue;
        }
        if (rdlm_load(&slot->state, RDLM_RELAXED) != RDLM_SLOT_ACTIVE) {
            rdlm_fetch_add(&hdr->attached, 1, RDLM_RELAXED); /* not a dead one's slot */
        }
        /* Records of a dead process go with it: waiters treat them as gone. */
        for (int r = 0; r < RDLM_SLOT_RECORDS; r++) {
            rdlm_store(&slot->rec[r], 0, RDLM_RELAXED);
        }
        rdlm_store(&slot->creq, 0, RDLM_RELAXED);
        rdlm_store(&slot->session, 0, RDLM_RELAXED);
        rdlm_store(&slot->pid, (int32_t)getpid(), RDLM_RELAXED);
        rdlm_store(&slot->start_time, rdlm_proc_start_time(getpid()), RDLM_RELAXED);
        rdlm_store(&slot->rand_id, rdlm_proc_random_id(), RDLM_RELAXED);
        uint32_t gen = rdlm_fetch_add(&slot->gen, 1, RDLM_RELAXED) + 1;
        rdlm_store(&slot->state, RDLM_SLOT_ACTIVE, RDLM_RELEASE);
        if (i >= hwm) {
            rdlm_store(&hdr->slot_hwm, i + 1, RDLM_RELEASE);
        }
        seg->self_slot = i;
        seg->self_owner = RDLM_OWNER_MAKE(i, gen);
        return RDLM_OK;
    }
    rdlm_error("%s/%s: all %u process slots are held by live processes (raise "
               "RDLM_MAX_PROCS for the creator)",
               seg->place.dir, seg->seg_name, seg->max_procs);
    return RDLM_ERR_NO_RESOURCE;
}

static void rdlm_segment_unmap(rdlm_segment_t *seg)
{
    rdlm_mapping_put(seg->hdr);
    seg->hdr = NULL;
}

/* 1 if another process holds the segment open on fd (its LOCK_SH), 0 if nobody does
 * (we now hold it with LOCK_EX), -1 on error. Dead processes' locks died with them.
 * Under the lock-file flock, so no attacher comes or goes meanwhile. */
static int rdlm_segment_held(const rdlm_segment_t *seg, int fd, rdlm_status_t *status_p)
{
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
        return 0;
    }
    if (errno == EWOULDBLOCK) {
        return 1;
    }
    rdlm_error("flock(%s/%s, LOCK_EX): %s", seg->place.dir, seg->seg_name, strerror(errno));
    *status_p = RDLM_ERR_IO;
    return -1;
}

/* Join the mapped segment: hold fd with LOCK_SH while attached (converting our
 * LOCK_EX if we took it; only lock-file holders take LOCK_EX, and that is us). */
static rdlm_status_t rdlm_segment_share(rdlm_segment_t *seg, int fd)
{
    if (flock(fd, LOCK_SH | LOCK_NB) != 0) {
        rdlm_error("flock(%s/%s, LOCK_SH): %s", seg->place.dir, seg->seg_name,
                   strerror(errno));
        rdlm_segment_unmap(seg);
        return RDLM_ERR_IO;
    }
    seg->fd = fd;
    return RDLM_OK;
}

static rdlm_status_t rdlm_segment_unlink_stale(rdlm_segment_t *seg)
{
    if (!seg->keep_stale) {
        unlinkat(seg->dir_fd, seg->seg_name, 0);
    }
    seg->replaced_stale = 1;
    return RDLM_ERR_NOT_FOUND;
}

/* An unusable header: replace the segment if nobody holds it, else refuse it. */
static rdlm_status_t rdlm_segment_refuse_or_replace(rdlm_segment_t *seg, int held,
                                                    const char *why)
{
    if (held) {
        rdlm_error("%s/%s: %s; processes are attached, so it is left alone (the "
                   "first attach after they are all gone replaces it)",
                   seg->place.dir, seg->seg_name, why);
        return RDLM_ERR_CORRUPT;
    }
    rdlm_warn("%s/%s: %s, and no process is attached: %s", seg->place.dir, seg->seg_name,
              why, seg->keep_stale ? "stale" : "replacing it");
    return rdlm_segment_unlink_stale(seg);
}

/* A usable, mapped segment: replace it if nobody holds it and no slot is held by a
 * live process (one that closed its descriptors still counts), else join it. */
static rdlm_status_t rdlm_segment_join_or_replace(rdlm_segment_t *seg, int fd, int held,
                                                  uint32_t *stale_epoch_p)
{
    if (held || rdlm_segment_live_procs(seg) > 0) {
        return rdlm_segment_share(seg, fd);
    }
    *stale_epoch_p = seg->hdr->epoch;
    rdlm_info("%s/%s: no live process attached (creator pid %d): replacing it",
              seg->place.dir, seg->seg_name, (int)seg->hdr->creator_pid);
    rdlm_segment_unmap(seg);
    return rdlm_segment_unlink_stale(seg);
}

/* Decide about the existing segment open on fd: join it (RDLM_OK, fd kept), replace
 * it (unlinked: RDLM_ERR_NOT_FOUND), or refuse it (RDLM_ERR_CORRUPT, ...). */
static rdlm_status_t rdlm_segment_judge(rdlm_segment_t *seg, int fd,
                                        uint32_t *stale_epoch_p)
{
    char why[RDLM_WHY_BYTES];
    rdlm_seg_header_t h;
    struct stat st;
    rdlm_status_t status = rdlm_segment_check_owner(seg, fd, seg->seg_name, &st);
    int held;

    if (status != RDLM_OK) {
        return status;
    }
    held = rdlm_segment_held(seg, fd, &status);
    if (held < 0) {
        return status;
    }
    if (!rdlm_segment_read_header(fd, &st, &h, why)) {
        return rdlm_segment_refuse_or_replace(seg, held, why);
    }
    status = rdlm_segment_map(seg, fd, &st, &h);
    if (status == RDLM_ERR_CORRUPT) {
        return rdlm_segment_refuse_or_replace(seg, held, "magic changed while attaching");
    }
    if (status != RDLM_OK) {
        return status;
    }
    return rdlm_segment_join_or_replace(seg, fd, held, stale_epoch_p);
}

/* Open the existing segment and judge it. RDLM_ERR_NOT_FOUND: there is none (any
 * more); create one. On RDLM_OK seg->fd holds it. */
static rdlm_status_t rdlm_segment_open_existing(rdlm_segment_t *seg,
                                                uint32_t *stale_epoch_p)
{
    int fd = openat(seg->dir_fd, seg->seg_name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    rdlm_status_t status;

    if (fd < 0) {
        return errno == ENOENT ? RDLM_ERR_NOT_FOUND
                               : rdlm_segment_open_failed(seg, seg->seg_name, errno);
    }
    status = rdlm_segment_judge(seg, fd, stale_epoch_p);
    if (status != RDLM_OK) {
        close(fd); /* after the unlink if replaced: drops our LOCK_EX */
    }
    return status;
}

/* An unattached seg for job in place: names set, the place's directory open in
 * seg->dir_fd (created if create), nothing else open. */
static rdlm_status_t rdlm_segment_open_place(rdlm_segment_t *seg, const rdlm_place_t *place,
                                             const char *job, int create)
{
    rdlm_status_t status = RDLM_OK;

    memset(seg, 0, sizeof(*seg));
    seg->fd = -1;
    seg->place = *place;
    rdlm_place_names(place, job, seg->seg_name, seg->lock_name);
    seg->dir_fd = rdlm_place_open(place, create, &status);
    return status;
}

rdlm_segment_reap_t rdlm_segment_reap(const rdlm_place_t *place, const char *job,
                                      int dry_run, uint32_t *live_p)
{
    rdlm_segment_t seg;
    rdlm_segment_reap_t reap = RDLM_SEGMENT_REAP_REFUSED;
    rdlm_status_t status = rdlm_segment_open_place(&seg, place, job, 0);
    uint32_t stale_epoch = 0;
    int lock_fd, had_lock;

    *live_p = 0;
    if (status != RDLM_OK) { /* no directory: nothing left there */
        return status == RDLM_ERR_NOT_FOUND ? RDLM_SEGMENT_REAP_REMOVED : reap;
    }
    seg.keep_stale = dry_run;
    had_lock = faccessat(seg.dir_fd, seg.lock_name, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
    lock_fd = rdlm_segment_lock_as(&seg, LOCK_NB, &status);
    if (lock_fd < 0) {
        close(seg.dir_fd);
        return status == RDLM_ERR_BUSY ? RDLM_SEGMENT_REAP_BUSY : RDLM_SEGMENT_REAP_REFUSED;
    }
    status = rdlm_segment_open_existing(&seg, &stale_epoch);
    if (status == RDLM_OK) { /* in use: leave it */
        *live_p = rdlm_segment_live_procs(&seg);
        rdlm_segment_unmap(&seg);
        close(seg.fd);
        reap = RDLM_SEGMENT_REAP_IN_USE;
    } else if (status == RDLM_ERR_NOT_FOUND) { /* stale, gone, or removed just now */
        reap = RDLM_SEGMENT_REAP_REMOVED;
    }
    /* A stale job's lock file goes with it; one this call created goes in any case. */
    if ((reap == RDLM_SEGMENT_REAP_REMOVED && !dry_run) || !had_lock) {
        unlinkat(seg.dir_fd, seg.lock_name, 0);
    }
    rdlm_segment_unlock(lock_fd);
    close(seg.dir_fd);
    return reap;
}

rdlm_status_t rdlm_segment_attach(const rdlm_segment_params_t *params,
                                  rdlm_segment_t *seg_p)
{
    rdlm_segment_t seg;
    rdlm_place_t place;
    rdlm_status_t status = rdlm_place_init(&place, params->dir);
    uint32_t stale_epoch = 0;
    int lock_fd;

    if (status != RDLM_OK) {
        return status;
    }
    status = rdlm_segment_open_place(&seg, &place, params->job, 1);
    if (status != RDLM_OK) {
        return status;
    }
    lock_fd = rdlm_segment_lock(&seg, &status);
    if (lock_fd < 0) {
        goto out_close_dir;
    }
    status = rdlm_segment_open_existing(&seg, &stale_epoch);
    if (status == RDLM_ERR_NOT_FOUND) {
        status = rdlm_segment_create(&seg, params, stale_epoch);
    }
    if (status != RDLM_OK) {
        goto out_unlock;
    }
    status = rdlm_segment_claim_slot(&seg);
    if (status != RDLM_OK) {
        rdlm_segment_unmap(&seg);
        close(seg.fd);
        goto out_unlock;
    }
    seg.alive = rdlm_alive_create(seg.max_procs, rdlm_alive_fd_budget());
    seg.planted =
        (getenv("RDLMTEST_TABLE_NO_FLOOR") != NULL ? RDLM_PLANTED_NO_FLOOR : 0) |
        (getenv("RDLMTEST_TABLE_RETIRE_OPEN") != NULL ? RDLM_PLANTED_RETIRE_OPEN : 0);
    *seg_p = seg;
    seg_p->dir_fd = -1; /* reopened by detach */
out_unlock:
    rdlm_segment_unlock(lock_fd);
out_close_dir:
    close(seg.dir_fd);
    if (status == RDLM_OK) {
        rdlm_leftovers_sweep(&place, params->job);
    }
    return status;
}

/* Under the lock-file flock: 1 if no other process holds the segment and no slot is
 * held by a live process (attach's replacement test), so the caller removes it. Tries
 * to convert our LOCK_SH to LOCK_EX; a failed conversion may drop it (we are leaving). */
static int rdlm_segment_unused(const rdlm_segment_t *seg)
{
    return flock(seg->fd, LOCK_EX | LOCK_NB) == 0 && rdlm_segment_live_procs(seg) == 0;
}

void rdlm_segment_detach(rdlm_segment_t *seg)
{
    rdlm_status_t status;
    rdlm_slot_t *slot = &seg->slots[seg->self_slot];
    int lock_fd = -1;

    seg->dir_fd = rdlm_place_open(&seg->place, 0, &status);
    if (seg->dir_fd >= 0) {
        lock_fd = rdlm_segment_lock(seg, &status);
    }
    rdlm_store(&slot->state, RDLM_SLOT_FREE, RDLM_RELEASE);
    rdlm_fetch_sub(&seg->hdr->attached, 1, RDLM_RELAXED);
    if (lock_fd >= 0 && rdlm_segment_unused(seg)) {
        unlinkat(seg->dir_fd, seg->seg_name, 0);
        unlinkat(seg->dir_fd, seg->lock_name, 0);
        rdlm_debug("removed %s/%s (last process detached)", seg->place.dir, seg->seg_name);
    }
    close(seg->fd);
    rdlm_segment_unmap(seg);
    if (lock_fd >= 0) {
        rdlm_segment_unlock(lock_fd);
    }
    if (seg->dir_fd >= 0) {
        close(seg->dir_fd);
        seg->dir_fd = -1;
    }
    rdlm_alive_destroy(seg->alive);
    seg->alive = NULL;
}
