/*
 * The shm backend: peers on one node; remote atomics are CPU atomics on a shared
 * segment.
 *
 * - Open: every rank creates its active-message ring (a POSIX shared-memory object)
 *   and allgathers {uid, host name, boot id, ring name}. All ranks must be on the same
 *   host (same host name and same /proc/sys/kernel/random/boot_id) and the same user,
 *   otherwise open fails on every rank with RDLM_ERR_UNSUPPORTED and a log line. Every
 *   rank then maps every peer's ring; after a barrier the ring objects are unlinked
 *   (the mappings stay), so a crash leaves no ring behind.
 * - Memory: reg(NULL, len) creates a new shared-memory object (shm_open, name
 *   "/rdlm-shm-<uid>-<pid>-<counter>", O_CREAT|O_EXCL, mode 0600), sizes it and maps
 *   it (zeroed). The object is unlinked at dereg or destroy. reg(addr != NULL) returns
 *   RDLM_ERR_UNSUPPORTED: this backend can only expose memory it allocates itself.
 * - Remote keys: {magic, length, owner pid, object name}. Unpack opens the object
 *   (O_RDWR), checks owner uid, mode (no group/other bits) and size, and maps it into
 *   this process; the mapping lives in the generation-checked rkey table, so a
 *   released key gives RDLM_ERR_BAD_HANDLE. Loopback works: the owner maps its own
 *   object a second time. A key must be unpacked before its owner deregisters the
 *   region (the name is gone afterwards: RDLM_ERR_NOT_FOUND); a key unpacked earlier
 *   keeps its mapping valid until released (the pages outlive the unlink).
 * - Atomics: __atomic builtins on the mapped word (seq_cst), complete on return; the
 *   posted fetch-add is the same operation. put is memcpy followed by a release fence,
 *   get an acquire fence followed by memcpy; flush is a seq_cst fence. Atomics never
 *   need the target to progress.
 * - Active messages: one bounded multi-producer ring per receiver (Vyukov's sequence
 *   numbered slots), RDLM_SHM_AM_SLOTS slots of RDLM_SHM_AM_MAX payload bytes. progress()
 *   drains the caller's own ring (one drainer at a time: trylock). A sender whose
 *   target ring is full spins, draining its own ring meanwhile (so two ranks sending to
 *   each other cannot deadlock), until the target drains.
 * - Progress thread (params.progress_thread): drains the ring, sleeping 50 us when idle
 *   (shared memory has no event fd to wait on).
 * - Threads: every entry is thread-safe, so THREAD_MULTI is always granted.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "tl_internal.h"

#define RDLM_SHM_RKEY_MAGIC 0x52444c53u /* "RDLS" */
#define RDLM_SHM_BOOT_MAGIC 0x52444c42u /* "RDLB" */
#define RDLM_SHM_RING_MAGIC 0x52444c52u /* "RDLR" */
#define RDLM_SHM_NAME_MAX 64u
#define RDLM_SHM_AM_MAX 1024u  /* payload bytes */
#define RDLM_SHM_AM_SLOTS 256u /* per receiver; power of two */
#define RDLM_SHM_NAME_PREFIX "/rdlm-shm-"

/* ---- wire formats ------------------------------------------------------------------ */

typedef struct rdlm_shm_rkey_wire {
    uint32_t magic;
    uint32_t pid; /* owner, for messages */
    uint64_t len;
    char name[RDLM_SHM_NAME_MAX];
} rdlm_shm_rkey_wire_t;

typedef struct rdlm_shm_boot_rec {
    uint32_t magic;
    uint32_t uid;
    char host[64];
    char boot_id[48];
    char ring[RDLM_SHM_NAME_MAX];
} rdlm_shm_boot_rec_t;

/* ---- the active-message ring (in shared memory) ----------------------------------- */

typedef struct rdlm_shm_am_slot {
    rdlm_atomic_u64_t seq;
    uint32_t src;
    uint32_t id;
    uint32_t len;
    uint32_t pad;
    unsigned char data[RDLM_SHM_AM_MAX];
} rdlm_shm_am_slot_t;

typedef struct rdlm_shm_ring {
    uint32_t magic;
    uint32_t nslots;
    char pad0[56];
    rdlm_atomic_u64_t tail; /* producers */
    char pad1[56];
    uint64_t head; /* the consumer only (under am_lock) */
    char pad2[56];
    rdlm_shm_am_slot_t slots[RDLM_SHM_AM_SLOTS];
} rdlm_shm_ring_t;

/* ---- process-local state ----------------------------------------------------------- */

struct rdlm_tl_mem {
    rdlm_tl_region_t region; /* first: addr, len, the context's list */
    char name[RDLM_SHM_NAME_MAX];
};

typedef struct rdlm_shm_rkey {
    void *addr;
    size_t len;
} rdlm_shm_rkey_t;

typedef struct rdlm_shm_am_handler {
    rdlm_tl_am_handler_func_t func;
    void *arg;
} rdlm_shm_am_handler_t;

typedef struct rdlm_shm_ctx {
    rdlm_tl_ctx_t super;
    rdlm_tl_bootstrap_t boot;
    rdlm_tl_rkey_table_t rkeys;
    pthread_mutex_t lock; /* the region list */
    rdlm_tl_region_t *mems;
    rdlm_shm_ring_t *own;    /* our ring (also rings[rank]) */
    rdlm_shm_ring_t **rings; /* size entries, mapped */
    pthread_mutex_t am_lock; /* the drainer and the handler table */
    rdlm_shm_am_handler_t am[RDLM_TL_AM_ID_MAX];
    pthread_t thread;
    int thread_running;
    rdlm_atomic_u32_t stop;
} rdlm_shm_ctx_t;

static rdlm_atomic_u32_t rdlm_shm_counter;

/* Create a new object O_EXCL with a unique name; fd and name on success. */
static rdlm_status_t rdlm_shm_create(size_t len, char *name, int *fd_p)
{
    int fd, tries;

    for (tries = 0; tries < 64; tries++) {
        snprintf(name, RDLM_SHM_NAME_MAX, RDLM_SHM_NAME_PREFIX "%u-%d-%u", (unsigned)getuid(),
                 (int)getpid(), rdlm_fetch_add(&rdlm_shm_counter, 1, RDLM_RELAXED));
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd >= 0)
            break;
        if (errno != EEXIST) {
            rdlm_error("shm: shm_open(%s): %s", name, strerror(errno));
            return RDLM_ERR_IO;
        }
    }
    if (fd < 0) {
        rdlm_error("shm: no free shared-memory object name after 64 tries");
        return RDLM_ERR_IO;
    }
    if (ftruncate(fd, (off_t)len) != 0) {
        rdlm_error("shm: ftruncate(%s, %zu): %s", name, len, strerror(errno));
        close(fd);
        shm_unlink(name);
        return errno == ENOSPC ? RDLM_ERR_NO_MEMORY : RDLM_ERR_IO;
    }
    *fd_p = fd;
    return RDLM_OK;
}

static rdlm_status_t rdlm_shm_map_fd(int fd, size_t len, const char *name, void **addr_p)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

    if (p == MAP_FAILED) {
        rdlm_error("shm: mmap(%s, %zu): %s", name, len, strerror(errno));
        return errno == ENOMEM ? RDLM_ERR_NO_MEMORY : RDLM_ERR_IO;
    }
    *addr_p = p;
    return RDLM_OK;
}

/* A name from a peer: NUL-terminated, our prefix, no further '/'. */
static int rdlm_shm_name_ok(const char *name)
{
    size_t n = strnlen(name, RDLM_SHM_NAME_MAX);

    return n < RDLM_SHM_NAME_MAX && n > strlen(RDLM_SHM_NAME_PREFIX) &&
           strncmp(name, RDLM_SHM_NAME_PREFIX, strlen(RDLM_SHM_NAME_PREFIX)) == 0 &&
           strchr(name + 1, '/') == NULL;
}

/* Open and map a peer's object of exactly len bytes, checking owner and mode. */
static rdlm_status_t rdlm_shm_attach(const char *name, size_t len, void **addr_p)
{
    struct stat sb;
    rdlm_status_t st;
    int fd = shm_open(name, O_RDWR, 0);

    if (fd < 0) {
        rdlm_error("shm: shm_open(%s): %s (deregistered before the key was unpacked?)",
                   name, strerror(errno));
        return errno == ENOENT ? RDLM_ERR_NOT_FOUND : RDLM_ERR_IO;
    }
    if (fstat(fd, &sb) != 0) {
        rdlm_error("shm: fstat(%s): %s", name, strerror(errno));
        close(fd);
        return RDLM_ERR_IO;
    }
    if (sb.st_uid != geteuid() || (sb.st_mode & 077) != 0) {
        rdlm_error("shm: %s belongs to uid %u with mode %o (expected uid %u, mode 0600)",
                   name, (unsigned)sb.st_uid, (unsigned)(sb.st_mode & 0777),
                   (unsigned)geteuid());
        close(fd);
        return RDLM_ERR_PERMISSION;
    }
    if ((uint64_t)sb.st_size != (uint64_t)len) {
        rdlm_error("shm: %s has %lld bytes, the key says %zu", name, (long long)sb.st_size,
                   len);
        close(fd);
        return RDLM_ERR_CORRUPT;
    }
    st = rdlm_shm_map_fd(fd, len, name, addr_p);
    close(fd);
    return st;
}

/* ---- setup ------------------------------------------------------------------------- */

static rdlm_status_t rdlm_shm_query(rdlm_tl_ctx_h ctx, rdlm_tl_caps_t *caps_p)
{
    rdlm_shm_ctx_t *c = (rdlm_shm_ctx_t *)ctx;

    memset(caps_p, 0, sizeof(*caps_p));
    caps_p->backend = "shm";
    caps_p->flags = RDLM_TL_CAP_AMO64 | RDLM_TL_CAP_AMO64_POST | RDLM_TL_CAP_RMA |
                    RDLM_TL_CAP_AM | RDLM_TL_CAP_LOOPBACK;
    caps_p->atomic_domain = RDLM_TL_ATOMIC_CPU;
    caps_p->amo_needs_target_progress = 0;
    caps_p->thread_mode = RDLM_TL_THREAD_MULTI;
    caps_p->serialized_by_rdlm = 0;
    caps_p->progress_thread = c->thread_running;
    caps_p->am_max_payload = RDLM_SHM_AM_MAX;
    caps_p->rank = c->super.rank;
    caps_p->size = c->super.size;
    return RDLM_OK;
}

/* Drain our ring; the caller holds am_lock. */
static unsigned rdlm_shm_drain(rdlm_shm_ctx_t *c)
{
    rdlm_shm_ring_t *r = c->own;
    unsigned n = 0;

    for (;;) {
        uint64_t pos = r->head;
        rdlm_shm_am_slot_t *s = &r->slots[pos & (RDLM_SHM_AM_SLOTS - 1)];
        rdlm_shm_am_handler_t *h;

        if (rdlm_load(&s->seq, RDLM_ACQUIRE) != pos + 1)
            break;
        if (s->id < RDLM_TL_AM_ID_MAX && s->len <= RDLM_SHM_AM_MAX &&
            (h = &c->am[s->id])->func != NULL) {
            h->func(h->arg, s->src, s->data, s->len);
            rdlm_tl_stat_add(&c->super.stats.am_recv, 1);
        } else {
            rdlm_debug("shm: dropped an active message id %u from rank %u (no handler)",
                       s->id, s->src);
        }
        rdlm_store(&s->seq, pos + RDLM_SHM_AM_SLOTS, RDLM_RELEASE);
        r->head = pos + 1;
        n++;
    }
    return n;
}

static unsigned rdlm_shm_progress(rdlm_tl_ctx_h ctx)
{
    rdlm_shm_ctx_t *c = (rdlm_shm_ctx_t *)ctx;
    unsigned n = 0;

    rdlm_tl_stat_add(&c->super.stats.progress, 1);
    if (pthread_mutex_trylock(&c->am_lock) == 0) {
        n = rdlm_shm_drain(c);
        pthread_mutex_unlock(&c->am_lock);
    }
    return n;
}

static rdlm_status_t rdlm_shm_flush(rdlm_tl_ctx_h ctx, uint32_t peer)
{
    (void)ctx;
    (void)peer;
    /* Every operation completed at the target when it returned; order it. */
    atomic_thread_fence(memory_order_seq_cst);
    return RDLM_OK;
}

static void *rdlm_shm_thread(void *arg)
{
    rdlm_shm_ctx_t *c = arg;

    while (!rdlm_load(&c->stop, RDLM_ACQUIRE))
        if (rdlm_shm_progress(&c->super) == 0)
            nanosleep(&(struct timespec){0, 50000}, NULL);
    return NULL;
}

static void rdlm_shm_rkey_free(void *backend, void *arg)
{
    rdlm_shm_rkey_t *k = backend;

    (void)arg;
    munmap(k->addr, k->len);
    free(k);
}

static void rdlm_shm_mem_free(struct rdlm_tl_mem *m)
{
    munmap(m->region.addr, m->region.len);
    shm_unlink(m->name);
    free(m);
}

static void rdlm_shm_free(rdlm_shm_ctx_t *c)
{
    uint32_t i;

    if (c->thread_running) {
        rdlm_store(&c->stop, 1, RDLM_RELEASE);
        pthread_join(c->thread, NULL);
        c->thread_running = 0;
    }
    rdlm_tl_rkey_table_fini(&c->rkeys, rdlm_shm_rkey_free, NULL);
    while (c->mems != NULL) {
        rdlm_tl_mem_h m = rdlm_tl_region_mem(c->mems);

        c->mems = c->mems->next;
        rdlm_shm_mem_free(m);
    }
    if (c->rings != NULL) {
        for (i = 0; i < c->super.size; i++)
            if (c->rings[i] != NULL && c->rings[i] != c->own)
                munmap(c->rings[i], sizeof(rdlm_shm_ring_t));
        free(c->rings);
    }
    if (c->own != NULL)
        munmap(c->own, sizeof(rdlm_shm_ring_t));
    pthread_mutex_destroy(&c->lock);
    pthread_mutex_destroy(&c->am_lock);
    free(c);
}

static void rdlm_shm_destroy(rdlm_tl_ctx_h ctx)
{
    rdlm_shm_ctx_t *c = (rdlm_shm_ctx_t *)ctx;
    rdlm_tl_idle_t idle = {rdlm_tl_progress_idle, ctx};
    rdlm_status_t st;

    if (ctx == NULL)
        return;
    atomic_thread_fence(memory_order_seq_cst);
    /* Nobody may still be writing into our ring or our regions. */
    st = c->boot.barrier(c->boot.arg, &idle);
    if (st != RDLM_OK)
        rdlm_warn("shm: destroy: barrier failed (%s); releasing anyway",
                  rdlm_status_name(st));
    rdlm_shm_free(c);
}

/* ---- memory ------------------------------------------------------------------------ */

static rdlm_status_t rdlm_shm_mem_reg(rdlm_tl_ctx_h ctx, void *addr, size_t len,
                                      rdlm_tl_mem_h *mem_p)
{
    rdlm_shm_ctx_t *c = (rdlm_shm_ctx_t *)ctx;
    struct rdlm_tl_mem *m;
    void *base;
    rdlm_status_t st;
    int fd;

    if (addr != NULL) {
        rdlm_debug("shm: reg: only memory the backend allocates (addr == NULL) can be "
                   "exposed");
        return RDLM_ERR_UNSUPPORTED;
    }
    if (len == 0 || mem_p == NULL)
        return RDLM_ERR_INVALID_ARG;
    m = calloc(1, sizeof(*m));
    if (m == NULL)
        return RDLM_ERR_NO_MEMORY;
    st = rdlm_shm_create(len, m->name, &fd);
    if (st != RDLM_OK) {
        free(m);
        return st;
    }
    st = rdlm_shm_map_fd(fd, len, m->name, &base);
    close(fd);
    if (st != RDLM_OK) {
        shm_unlink(m->name);
        free(m);
        return st;
    }
    rdlm_tl_region_add(&c->mems, &c->lock, &m->region, base, len);
    *mem_p = m;
    return RDLM_OK;
}

static rdlm_status_t rdlm_shm_rkey_pack(rdlm_tl_ctx_h ctx, rdlm_tl_mem_h mem, void *buf,
                                        size_t buf_len, size_t *len_p)
{
    rdlm_shm_rkey_wire_t w;

    (void)ctx;
    if (mem == NULL)
        return RDLM_ERR_BAD_HANDLE;
    if (buf == NULL || buf_len < sizeof(w))
        return RDLM_ERR_INVALID_ARG;
    memset(&w, 0, sizeof(w));
    w.magic = RDLM_SHM_RKEY_MAGIC;
    w.pid = (uint32_t)getpid();
    w.len = mem->region.len;
    memcpy(w.name, mem->name, sizeof(w.name));
    memcpy(buf, &w, sizeof(w));
    if (len_p != NULL)
        *len_p = sizeof(w);
    return RDLM_OK;
}

static rdlm_status_t rdlm_shm_rkey_unpack(rdlm_tl_ctx_h ctx, uint32_t peer, const void *buf,
                                          size_t len, rdlm_tl_rkey_h *rkey_p)
{
    rdlm_shm_ctx_t *c = (rdlm_shm_ctx_t *)ctx;
    rdlm_shm_rkey_wire_t w;
    rdlm_shm_rkey_t *k;
    rdlm_status_t st;

    if (buf == NULL || rkey_p == NULL || len < sizeof(w) || peer >= c->super.size)
        return RDLM_ERR_INVALID_ARG;
    memcpy(&w, buf, sizeof(w));
    if (w.magic != RDLM_SHM_RKEY_MAGIC || w.len == 0 || w.len > SIZE_MAX ||
        !rdlm_shm_name_ok(w.name))
        return RDLM_ERR_INVALID_ARG;
    k = malloc(sizeof(*k));
    if (k == NULL)
        return RDLM_ERR_NO_MEMORY;
    k->len = (size_t)w.len;
    st = rdlm_shm_attach(w.name, k->len, &k->addr);
    if (st != RDLM_OK) {
        free(k);
        return st;
    }
    st = rdlm_tl_rkey_table_add(&c->rkeys, peer, (uint64_t)(uintptr_t)k->addr, w.len, k,
                                rkey_p);
    if (st != RDLM_OK)
        rdlm_shm_rkey_free(k, NULL);
    return st;
}

static rdlm_status_t rdlm_shm_rkey_release(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey)
{
    rdlm_shm_ctx_t *c = (rdlm_shm_ctx_t *)ctx;
    void *k;
    rdlm_status_t st = rdlm_tl_rkey_table_remove(&c->rkeys, rkey, &k);

    if (st == RDLM_OK)
        rdlm_shm_rkey_free(k, NULL);
    return st;
}

static rdlm_status_t rdlm_shm_mem_dereg(rdlm_tl_ctx_h ctx, rdlm_tl_mem_h mem)
{
    rdlm_shm_ctx_t *c = (rdlm_shm_ctx_t *)ctx;

    if (mem == NULL)
        return RDLM_ERR_BAD_HANDLE;
    rdlm_tl_region_remove(&c->mems, &c->lock, &mem->region);
    rdlm_shm_mem_free(mem);
    return RDLM_OK;
}

/* ---- atomics and put/get ------------------------------------------------------------- */

/* The local address of (rkey, offset) for len bytes aligned to align. */
static inline rdlm_status_t rdlm_shm_word(rdlm_shm_ctx_t *c, rdlm_tl_rkey_h rkey,
                                          uint64_t offset, uint64_t len, uint64_t align,
                                          void **p)
{
    rdlm_tl_rkey_slot_t *s;
    rdlm_status_t st = rdlm_tl_rkey_lookup(&c->rkeys, rkey, offset, len, align, &s);

    if (st != RDLM_OK)
        return st;
    *p = (char *)(uintptr_t)s->base + offset;
    return RDLM_OK;
}

typedef enum rdlm_shm_amo_op {
    RDLM_SHM_CSWAP,
    RDLM_SHM_FADD,
    RDLM_SHM_SWAP,
    RDLM_SHM_OR
} rdlm_shm_amo_op_t;

/* One 8-byte CPU atomic (sequentially consistent) on (rkey, offset): *old_p receives the
 * word's value before it. Inlined with a constant op, the switch folds away. */
static inline rdlm_status_t rdlm_shm_amo(rdlm_tl_ctx_h ctx, rdlm_shm_amo_op_t op,
                                         rdlm_tl_rkey_h rkey, uint64_t offset,
                                         uint64_t compare, uint64_t value, uint64_t *old_p)
{
    rdlm_shm_ctx_t *c = (rdlm_shm_ctx_t *)ctx;
    void *p;
    rdlm_status_t st = rdlm_shm_word(c, rkey, offset, 8, 8, &p);

    if (st != RDLM_OK)
        return st;
    switch (op) {
    case RDLM_SHM_CSWAP:
        __atomic_compare_exchange_n((uint64_t *)p, &compare, value, 0, __ATOMIC_SEQ_CST,
                                    __ATOMIC_SEQ_CST);
        *old_p = compare;
        break;
    case RDLM_SHM_FADD:
        *old_p = __atomic_fetch_add((uint64_t *)p, value, __ATOMIC_SEQ_CST);
        break;
    case RDLM_SHM_SWAP:
        *old_p = __atomic_exchange_n((uint64_t *)p, value, __ATOMIC_SEQ_CST);
        break;
    case RDLM_SHM_OR:
        *old_p = __atomic_fetch_or((uint64_t *)p, value, __ATOMIC_SEQ_CST);
        break;
    }
    rdlm_tl_stat_add(&c->super.stats.amo, 1);
    return RDLM_OK;
}

static rdlm_status_t rdlm_shm_cswap64(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey,
                                      uint64_t offset, uint64_t compare, uint64_t swap,
                                      uint64_t *old_p)
{
    return rdlm_shm_amo(ctx, RDLM_SHM_CSWAP, rkey, offset, compare, swap, old_p);
}

static rdlm_status_t rdlm_shm_fadd64(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey, uint64_t offset,
                                     uint64_t add, uint64_t *old_p)
{
    return rdlm_shm_amo(ctx, RDLM_SHM_FADD, rkey, offset, 0, add, old_p);
}

static rdlm_status_t rdlm_shm_swap64(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey, uint64_t offset,
                                     uint64_t value, uint64_t *old_p)
{
    return rdlm_shm_amo(ctx, RDLM_SHM_SWAP, rkey, offset, 0, value, old_p);
}

static rdlm_status_t rdlm_shm_for64(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey, uint64_t offset,
                                    uint64_t bits, uint64_t *old_p)
{
    return rdlm_shm_amo(ctx, RDLM_SHM_OR, rkey, offset, 0, bits, old_p);
}

static rdlm_status_t rdlm_shm_fadd64_post(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey,
                                          uint64_t offset, uint64_t add)
{
    uint64_t old; /* a posted add: the value before it is not wanted */

    return rdlm_shm_amo(ctx, RDLM_SHM_FADD, rkey, offset, 0, add, &old);
}

static rdlm_status_t rdlm_shm_put(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey, uint64_t offset,
                                  const void *buf, size_t len)
{
    rdlm_shm_ctx_t *c = (rdlm_shm_ctx_t *)ctx;
    void *p;
    rdlm_status_t st = rdlm_shm_word(c, rkey, offset, len, 1, &p);

    if (st != RDLM_OK)
        return st;
    memcpy(p, buf, len);
    /* The bytes are ordered before any later store or atomic of this thread. */
    atomic_thread_fence(memory_order_release);
    rdlm_tl_stat_add(&c->super.stats.puts, 1);
    rdlm_tl_stat_add(&c->super.stats.bytes, len);
    return RDLM_OK;
}

static rdlm_status_t rdlm_shm_get(rdlm_tl_ctx_h ctx, rdlm_tl_rkey_h rkey, uint64_t offset,
                                  void *buf, size_t len)
{
    rdlm_shm_ctx_t *c = (rdlm_shm_ctx_t *)ctx;
    void *p;
    rdlm_status_t st = rdlm_shm_word(c, rkey, offset, len, 1, &p);

    if (st != RDLM_OK)
        return st;
    /* The read is ordered after any earlier load or atomic of this thread. */
    atomic_thread_fence(memory_order_acquire);
    memcpy(buf, p, len);
    rdlm_tl_stat_add(&c->super.stats.gets, 1);
    rdlm_tl_stat_add(&c->super.stats.bytes, len);
    return RDLM_OK;
}

/* ---- active messages ------------------------------------------------------------------ */

static rdlm_status_t rdlm_shm_am_set_handler(rdlm_tl_ctx_h ctx, unsigned id,
                                             rdlm_tl_am_handler_func_t func, void *arg)
{
    rdlm_shm_ctx_t *c = (rdlm_shm_ctx_t *)ctx;

    if (id >= RDLM_TL_AM_ID_MAX)
        return RDLM_ERR_INVALID_ARG;
    pthread_mutex_lock(&c->am_lock);
    c->am[id].func = func;
    c->am[id].arg = func != NULL ? arg : NULL;
    pthread_mutex_unlock(&c->am_lock);
    return RDLM_OK;
}

static rdlm_status_t rdlm_shm_am_send(rdlm_tl_ctx_h ctx, uint32_t peer, unsigned id,
                                      const void *data, size_t len)
{
    rdlm_shm_ctx_t *c = (rdlm_shm_ctx_t *)ctx;
    rdlm_shm_ring_t *r;
    rdlm_shm_am_slot_t *s;
    uint64_t pos, seq;
    unsigned spins = 0;

    if (peer >= c->super.size || id >= RDLM_TL_AM_ID_MAX || len > RDLM_SHM_AM_MAX ||
        (len > 0 && data == NULL))
        return RDLM_ERR_INVALID_ARG;
    r = c->rings[peer];
    pos = rdlm_load(&r->tail, RDLM_RELAXED);
    for (;;) {
        s = &r->slots[pos & (RDLM_SHM_AM_SLOTS - 1)];
        seq = rdlm_load(&s->seq, RDLM_ACQUIRE);
        if (seq == pos) {
            if (rdlm_cas(&r->tail, &pos, pos + 1, RDLM_RELAXED))
                break;
            /* pos reloaded by the failed compare-exchange */
        } else if ((int64_t)(seq - pos) < 0) {
            /* Full: drain our own ring meanwhile so that two ranks sending to each
             * other cannot deadlock. */
            rdlm_shm_progress(ctx);
            if (++spins > 64)
                sched_yield();
            pos = rdlm_load(&r->tail, RDLM_RELAXED);
        } else {
            pos = rdlm_load(&r->tail, RDLM_RELAXED);
        }
    }
    s->src = c->super.rank;
    s->id = id;
    s->len = (uint32_t)len;
    if (len > 0)
        memcpy(s->data, data, len);
    rdlm_store(&s->seq, pos + 1, RDLM_RELEASE);
    rdlm_tl_stat_add(&c->super.stats.am_sent, 1);
    rdlm_tl_stat_add(&c->super.stats.bytes, len);
    return RDLM_OK;
}

/* ---- open ----------------------------------------------------------------------------- */

static const rdlm_tl_setup_ops_t rdlm_shm_setup_ops = {
    .query = rdlm_shm_query,
    .progress = rdlm_shm_progress,
    .flush = rdlm_shm_flush,
    .destroy = rdlm_shm_destroy,
    .peer_dead = rdlm_tl_stub_peer_dead,
    .sleep = rdlm_tl_stub_sleep,
};

static const rdlm_tl_mem_ops_t rdlm_shm_mem_ops = {
    .reg = rdlm_shm_mem_reg,
    .addr = rdlm_tl_region_addr,
    .rkey_pack = rdlm_shm_rkey_pack,
    .rkey_unpack = rdlm_shm_rkey_unpack,
    .rkey_release = rdlm_shm_rkey_release,
    .dereg = rdlm_shm_mem_dereg,
};

static const rdlm_tl_amo_ops_t rdlm_shm_amo_ops = {
    .cswap64 = rdlm_shm_cswap64,
    .fadd64 = rdlm_shm_fadd64,
    .swap64 = rdlm_shm_swap64,
    .for64 = rdlm_shm_for64,
    .fadd64_post = rdlm_shm_fadd64_post,
};

static const rdlm_tl_rma_ops_t rdlm_shm_rma_ops = {
    .put = rdlm_shm_put,
    .get = rdlm_shm_get,
};

static const rdlm_tl_am_ops_t rdlm_shm_am_ops = {
    .set_handler = rdlm_shm_am_set_handler,
    .send = rdlm_shm_am_send,
};

static void rdlm_shm_read_boot_id(char *buf, size_t len)
{
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

    memset(buf, 0, len);
    if (f == NULL)
        return; /* the host name alone then */
    if (fgets(buf, (int)len, f) == NULL)
        buf[0] = '\0';
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
}

/* Create and initialise our ring; its name goes into *rec. */
static rdlm_status_t rdlm_shm_ring_create(rdlm_shm_ctx_t *c, rdlm_shm_boot_rec_t *rec)
{
    void *p;
    rdlm_status_t st;
    uint32_t i;
    int fd;

    st = rdlm_shm_create(sizeof(rdlm_shm_ring_t), rec->ring, &fd);
    if (st != RDLM_OK)
        return st;
    st = rdlm_shm_map_fd(fd, sizeof(rdlm_shm_ring_t), rec->ring, &p);
    close(fd);
    if (st != RDLM_OK) {
        shm_unlink(rec->ring);
        return st;
    }
    c->own = p;
    c->own->nslots = RDLM_SHM_AM_SLOTS;
    for (i = 0; i < RDLM_SHM_AM_SLOTS; i++)
        rdlm_store(&c->own->slots[i].seq, i, RDLM_RELAXED);
    rdlm_store(&c->own->tail, 0, RDLM_RELAXED);
    c->own->head = 0;
    c->own->magic = RDLM_SHM_RING_MAGIC;
    atomic_thread_fence(memory_order_release);
    return RDLM_OK;
}

static rdlm_status_t rdlm_shm_open(const rdlm_tl_params_t *params, rdlm_tl_ctx_h *ctx_p)
{
    const rdlm_tl_bootstrap_t *b = params->bootstrap;
    rdlm_shm_boot_rec_t me, *all = NULL;
    rdlm_shm_ctx_t *c;
    rdlm_status_t st;
    uint32_t i;

    c = calloc(1, sizeof(*c));
    if (c == NULL)
        return RDLM_ERR_NO_MEMORY;
    c->super.setup = &rdlm_shm_setup_ops;
    c->super.mem = &rdlm_shm_mem_ops;
    c->super.amo = &rdlm_shm_amo_ops;
    c->super.rma = &rdlm_shm_rma_ops;
    c->super.am = &rdlm_shm_am_ops;
    c->super.backend = "shm";
    c->super.rank = b->rank;
    c->super.size = b->size;
    c->boot = *b;
    pthread_mutex_init(&c->lock, NULL);
    pthread_mutex_init(&c->am_lock, NULL);
    st = rdlm_tl_rkey_table_init(&c->rkeys, params->max_rkeys);
    if (st != RDLM_OK)
        goto err;
    c->rings = calloc(b->size, sizeof(*c->rings));
    all = calloc(b->size, sizeof(*all));
    if (c->rings == NULL || all == NULL) {
        st = RDLM_ERR_NO_MEMORY;
        goto err;
    }

    memset(&me, 0, sizeof(me));
    me.magic = RDLM_SHM_BOOT_MAGIC;
    me.uid = (uint32_t)geteuid();
    if (gethostname(me.host, sizeof(me.host) - 1) != 0)
        snprintf(me.host, sizeof(me.host), "?");
    rdlm_shm_read_boot_id(me.boot_id, sizeof(me.boot_id));
    st = rdlm_shm_ring_create(c, &me);
    if (st != RDLM_OK)
        me.ring[0] = '\0'; /* still take part in the allgather; everyone fails below */
    {
        /* No transport to progress yet: no idle callback. */
        rdlm_status_t ast = b->allgather(b->arg, &me, all, sizeof(me), NULL);

        if (ast != RDLM_OK) {
            rdlm_error("shm: open: allgather failed (%s)", rdlm_status_name(ast));
            st = ast;
            goto err_unlink;
        }
    }
    for (i = 0; i < b->size; i++) {
        if (all[i].magic != RDLM_SHM_BOOT_MAGIC || all[i].ring[0] == '\0') {
            rdlm_error("shm: open: rank %u could not create its message ring", i);
            st = RDLM_ERR_IO;
            goto err_unlink;
        }
        if (strncmp(all[i].host, me.host, sizeof(me.host)) != 0 ||
            strncmp(all[i].boot_id, me.boot_id, sizeof(me.boot_id)) != 0 ||
            all[i].uid != me.uid) {
            if (b->rank == 0)
                rdlm_error("shm: the shm transport needs every rank on one host and "
                           "user: rank %u is on '%.64s' (boot id %.40s, uid %u), rank 0 "
                           "on '%.64s' (boot id %.40s, uid %u); use ucx across nodes",
                           i, all[i].host, all[i].boot_id, all[i].uid, me.host,
                           me.boot_id, me.uid);
            else
                rdlm_debug("shm: rank %u is not on this host (rank 0 logs the details)",
                           i);
            st = RDLM_ERR_UNSUPPORTED;
            goto err_unlink;
        }
    }
    if (st != RDLM_OK)
        goto err_unlink;
    for (i = 0; i < b->size; i++) {
        void *p;

        if (i == b->rank) {
            c->rings[i] = c->own;
            continue;
        }
        if (!rdlm_shm_name_ok(all[i].ring)) {
            rdlm_error("shm: open: rank %u sent a malformed ring name", i);
            st = RDLM_ERR_CORRUPT;
            goto err_barrier;
        }
        st = rdlm_shm_attach(all[i].ring, sizeof(rdlm_shm_ring_t), &p);
        if (st != RDLM_OK)
            goto err_barrier;
        c->rings[i] = p;
        if (c->rings[i]->magic != RDLM_SHM_RING_MAGIC ||
            c->rings[i]->nslots != RDLM_SHM_AM_SLOTS) {
            rdlm_error("shm: open: rank %u's ring is not initialised", i);
            st = RDLM_ERR_CORRUPT;
            goto err_barrier;
        }
    }
    /* Every rank has mapped every ring: the names can go. */
    st = b->barrier(b->arg, NULL);
    shm_unlink(me.ring);
    if (st != RDLM_OK) {
        rdlm_error("shm: open: barrier failed (%s)", rdlm_status_name(st));
        goto err;
    }
    free(all);
    if (params->progress_thread) {
        if (pthread_create(&c->thread, NULL, rdlm_shm_thread, c) != 0) {
            rdlm_error("shm: open: cannot start the progress thread");
            rdlm_shm_free(c);
            return RDLM_ERR_NO_RESOURCE;
        }
        c->thread_running = 1;
    }
    *ctx_p = &c->super;
    return RDLM_OK;

err_barrier:
    /* A local failure after the allgather: peers wait in the barrier; take part so
     * that they see the failure through their own checks or time out cleanly. */
    (void)b->barrier(b->arg, NULL);
err_unlink:
    if (me.ring[0] != '\0')
        shm_unlink(me.ring);
err:
    free(all);
    rdlm_shm_free(c);
    return st;
}

const rdlm_tl_backend_t rdlm_tl_shm_backend = {
    .name = "shm",
    .open = rdlm_shm_open,
};
