/* The per-node shared segment: create, attach, replace stale, detach (segment.h). */
#include "segment.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "mapping.h"
#include "proc.h"

#define RDLM_HEADER_BYTES 4096u
#define RDLM_EPOCH_BASE 1735689600 /* 2025-01-01T00:00:00Z */
#define RDLM_EPOCH_MASK 0xffffffu  /* 24 bits: token = epoch << 40 | sequence */

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

/* The file must be ours and private: refuse anything else. */
static rdlm_status_t rdlm_segment_check_owner(int fd, const char *what)
{
    struct stat st;

    if (fstat(fd, &st) != 0) {
        rdlm_error("fstat(%s): %s", what, strerror(errno));
        return RDLM_ERR_IO;
    }
    if (st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
        rdlm_error("%s belongs to uid %u with mode %03o: refusing (expected uid %u, 0600)",
                   what, (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777),
                   (unsigned)geteuid());
        return RDLM_ERR_PERMISSION;
    }
    return RDLM_OK;
}

/* Open and flock the job's lock file; retry if the last detacher unlinked it between
 * our open and our flock. Returns the fd or a negative status. */
static int rdlm_segment_lock(const rdlm_segment_t *seg, rdlm_status_t *status_p)
{
    for (int attempt = 0; attempt < 100; attempt++) {
        struct stat by_fd, by_path;
        int fd = open(seg->lock_path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

        if (fd < 0) {
            rdlm_error("open(%s): %s", seg->lock_path, strerror(errno));
            *status_p =
                (errno == EACCES || errno == ELOOP) ? RDLM_ERR_PERMISSION : RDLM_ERR_IO;
            return -1;
        }
        *status_p = rdlm_segment_check_owner(fd, seg->lock_path);
        if (*status_p != RDLM_OK) {
            close(fd);
            return -1;
        }
        while (flock(fd, LOCK_EX) != 0 && errno == EINTR) {
        }
        if (fstat(fd, &by_fd) == 0 && stat(seg->lock_path, &by_path) == 0 &&
            by_fd.st_ino == by_path.st_ino && by_fd.st_dev == by_path.st_dev) {
            return fd;
        }
        close(fd); /* unlinked under us: take the new one */
    }
    rdlm_error("%s keeps being replaced; giving up", seg->lock_path);
    *status_p = RDLM_ERR_IO;
    return -1;
}

static void rdlm_segment_map_views(rdlm_segment_t *seg, void *base)
{
    seg->hdr = base;
    seg->slots = (rdlm_slot_t *)((char *)base + seg->hdr->slots_offset);
    seg->entries = (rdlm_entry_t *)((char *)base + seg->hdr->entries_offset);
    seg->names = (char(*)[RDLM_NAME_BYTES])((char *)base + seg->hdr->names_offset);
}

static uint32_t rdlm_segment_new_epoch(uint32_t stale_epoch)
{
    uint32_t minutes = (uint32_t)((time(NULL) - RDLM_EPOCH_BASE) / 60) & RDLM_EPOCH_MASK;

    return (stale_epoch >= minutes) ? ((stale_epoch + 1) & RDLM_EPOCH_MASK) : minutes;
}

/* Create a fresh segment (the name must not exist). */
static rdlm_status_t rdlm_segment_create(rdlm_segment_t *seg,
                                         const rdlm_segment_params_t *params,
                                         uint32_t stale_epoch)
{
    rdlm_seg_layout_t l = rdlm_segment_layout(params->capacity, params->max_procs);
    rdlm_seg_header_t *hdr;
    struct stat st;
    void *base;
    int fd;

    fd = shm_open(seg->shm_name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        rdlm_error("shm_open(%s, O_CREAT|O_EXCL): %s", seg->shm_name, strerror(errno));
        return RDLM_ERR_IO;
    }
    if (ftruncate(fd, (off_t)l.bytes) != 0) {
        rdlm_error("ftruncate(%s, %llu): %s", seg->shm_name, (unsigned long long)l.bytes,
                   strerror(errno));
        goto err_unlink;
    }
    if (fstat(fd, &st) != 0 || (base = rdlm_mapping_get(fd, &st, l.bytes)) == NULL) {
        rdlm_error("mmap(%s): %s", seg->shm_name, strerror(errno));
        goto err_unlink;
    }
    close(fd);
    hdr = base;
    hdr->layout = RDLM_SEG_LAYOUT;
    hdr->capacity = params->capacity;
    hdr->table_size = l.table_size;
    hdr->max_procs = params->max_procs;
    hdr->bytes = l.bytes;
    hdr->slots_offset = l.slots_offset;
    hdr->entries_offset = l.entries_offset;
    hdr->names_offset = l.names_offset;
    hdr->epoch = rdlm_segment_new_epoch(stale_epoch);
    hdr->creator_pid = (int32_t)getpid();
    hdr->creator_start = rdlm_proc_start_time(getpid());
    rdlm_store(&hdr->magic, RDLM_SEG_MAGIC, RDLM_RELEASE);
    rdlm_segment_map_views(seg, base);
    seg->created = 1;
    rdlm_debug("created %s: %u objects, %u slots, %llu bytes, epoch %u", seg->shm_name,
               params->capacity, params->max_procs, (unsigned long long)l.bytes,
               hdr->epoch);
    return RDLM_OK;

err_unlink:
    close(fd);
    shm_unlink(seg->shm_name);
    return RDLM_ERR_IO;
}

/* Map an existing segment. Returns RDLM_OK, RDLM_ERR_NOT_FOUND (no such name),
 * RDLM_ERR_CORRUPT (unusable: caller replaces it), or another error. */
static rdlm_status_t rdlm_segment_open_existing(rdlm_segment_t *seg)
{
    rdlm_seg_header_t probe;
    struct stat st;
    rdlm_status_t status;
    void *base;
    int fd;

    fd = shm_open(seg->shm_name, O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0);
    if (fd < 0) {
        if (errno == ENOENT) {
            return RDLM_ERR_NOT_FOUND;
        }
        rdlm_error("shm_open(%s): %s", seg->shm_name, strerror(errno));
        return (errno == EACCES) ? RDLM_ERR_PERMISSION : RDLM_ERR_IO;
    }
    status = rdlm_segment_check_owner(fd, seg->shm_name);
    if (status != RDLM_OK) {
        goto out_close;
    }
    status = RDLM_ERR_CORRUPT;
    if (fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(probe) ||
        pread(fd, &probe, sizeof(probe), 0) != (ssize_t)sizeof(probe)) {
        goto out_close;
    }
    if (probe.magic != RDLM_SEG_MAGIC || probe.layout != RDLM_SEG_LAYOUT ||
        probe.bytes != (uint64_t)st.st_size ||
        probe.bytes != rdlm_segment_bytes(probe.capacity, probe.max_procs)) {
        goto out_close;
    }
    base = rdlm_mapping_get(fd, &st, probe.bytes);
    if (base == NULL) {
        rdlm_error("mmap(%s): %s", seg->shm_name, strerror(errno));
        status = RDLM_ERR_IO;
        goto out_close;
    }
    /* Acquire the creator's header writes through the mapping (its release store of
     * the magic), not only through the flock the kernel orders. */
    if (rdlm_load(&((rdlm_seg_header_t *)base)->magic, RDLM_ACQUIRE) != RDLM_SEG_MAGIC) {
        rdlm_mapping_put(base);
        goto out_close;
    }
    rdlm_segment_map_views(seg, base);
    status = RDLM_OK;
out_close:
    close(fd);
    return status;
}

static int rdlm_slot_alive(const rdlm_slot_t *slot)
{
    return rdlm_load(&slot->state, RDLM_ACQUIRE) == RDLM_SLOT_ACTIVE &&
           rdlm_proc_alive(rdlm_load(&slot->pid, RDLM_RELAXED),
                           rdlm_load(&slot->start_time, RDLM_RELAXED));
}

uint32_t rdlm_segment_live_procs(const rdlm_segment_t *seg)
{
    uint32_t hwm = rdlm_load(&seg->hdr->slot_hwm, RDLM_ACQUIRE), live = 0;

    for (uint32_t i = 0; i < hwm; i++) {
        live += (uint32_t)rdlm_slot_alive(&seg->slots[i]);
    }
    return live;
}

int rdlm_segment_owner_alive(const rdlm_segment_t *seg, uint32_t owner)
{
    uint32_t idx = RDLM_OWNER_SLOT(owner);
    const rdlm_slot_t *slot;

    if (RDLM_OWNER_IS_NOBODY(owner) || idx >= seg->hdr->max_procs) {
        return 0;
    }
    slot = &seg->slots[idx];
    return RDLM_OWNER_MAKE(idx, rdlm_load(&slot->gen, RDLM_ACQUIRE)) == owner &&
           rdlm_slot_alive(slot);
}

/* Claim a free slot, or one whose process died. Called under the flock. */
static rdlm_status_t rdlm_segment_claim_slot(rdlm_segment_t *seg)
{
    rdlm_seg_header_t *hdr = seg->hdr;
    uint32_t hwm = rdlm_load(&hdr->slot_hwm, RDLM_RELAXED);

    for (uint32_t i = 0; i < hdr->max_procs; i++) {
        rdlm_slot_t *slot = &seg->slots[i];

        if (i < hwm && rdlm_slot_alive(slot)) {
            continue;
        }
        if (rdlm_load(&slot->state, RDLM_RELAXED) != RDLM_SLOT_ACTIVE) {
            rdlm_fetch_add(&hdr->attached, 1, RDLM_RELAXED); /* not a dead one's slot */
        }
        /* Records of a dead process go with it: waiters treat them as gone. */
        for (int r = 0; r < RDLM_SLOT_RECORDS; r++) {
            rdlm_store(&slot->rec[r], 0, RDLM_RELAXED);
        }
        rdlm_store(&slot->coll, 0, RDLM_RELAXED);
        rdlm_store(&slot->creq, 0, RDLM_RELAXED);
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
    rdlm_error("%s: all %u process slots are held by live processes (raise "
               "RDLM_MAX_PROCS for the creator)",
               seg->shm_name, hdr->max_procs);
    return RDLM_ERR_NO_RESOURCE;
}

static void rdlm_segment_unmap(rdlm_segment_t *seg)
{
    rdlm_mapping_put(seg->hdr);
    seg->hdr = NULL;
}

rdlm_status_t rdlm_segment_attach(const rdlm_segment_params_t *params,
                                  rdlm_segment_t *seg_p)
{
    rdlm_segment_t seg;
    rdlm_status_t status;
    uint32_t stale_epoch = 0;
    int lock_fd;

    memset(&seg, 0, sizeof(seg));
    snprintf(seg.shm_name, sizeof(seg.shm_name), "/rdlm-%u-%s", (unsigned)geteuid(),
             params->job);
    snprintf(seg.lock_path, sizeof(seg.lock_path), "/dev/shm/rdlm-%u-%s.lock",
             (unsigned)geteuid(), params->job);

    lock_fd = rdlm_segment_lock(&seg, &status);
    if (lock_fd < 0) {
        return status;
    }
    status = rdlm_segment_open_existing(&seg);
    if (status == RDLM_OK && rdlm_segment_live_procs(&seg) == 0) {
        stale_epoch = seg.hdr->epoch;
        rdlm_info("%s: no live process attached (creator pid %d): replacing it",
                  seg.shm_name, (int)seg.hdr->creator_pid);
        rdlm_segment_unmap(&seg);
        status = RDLM_ERR_CORRUPT;
    } else if (status == RDLM_ERR_CORRUPT) {
        rdlm_warn("%s: wrong magic, layout or size: replacing it", seg.shm_name);
    }
    if (status == RDLM_ERR_CORRUPT) {
        shm_unlink(seg.shm_name);
        seg.replaced_stale = 1;
        status = RDLM_ERR_NOT_FOUND;
    }
    if (status == RDLM_ERR_NOT_FOUND) {
        status = rdlm_segment_create(&seg, params, stale_epoch);
    }
    if (status != RDLM_OK) {
        goto out_unlock;
    }
    status = rdlm_segment_claim_slot(&seg);
    if (status != RDLM_OK) {
        rdlm_segment_unmap(&seg);
        goto out_unlock;
    }
    *seg_p = seg;
out_unlock:
    close(lock_fd); /* releases the flock */
    return status;
}

void rdlm_segment_detach(rdlm_segment_t *seg)
{
    rdlm_status_t status;
    rdlm_slot_t *slot = &seg->slots[seg->self_slot];
    int lock_fd = rdlm_segment_lock(seg, &status);

    rdlm_store(&slot->state, RDLM_SLOT_FREE, RDLM_RELEASE);
    rdlm_fetch_sub(&seg->hdr->attached, 1, RDLM_RELAXED);
    if (lock_fd >= 0 && rdlm_segment_live_procs(seg) == 0) {
        shm_unlink(seg->shm_name);
        unlink(seg->lock_path);
        rdlm_debug("removed %s (last process detached)", seg->shm_name);
    }
    rdlm_segment_unmap(seg);
    if (lock_fd >= 0) {
        close(lock_fd);
    }
}
