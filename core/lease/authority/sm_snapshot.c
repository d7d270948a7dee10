/*
 * Canonical snapshot of the lease state: serialise, hash, restore (sm.h).
 *
 * Format, little-endian, sessions by id and locks by name (so equal states give equal
 * bytes); only what apply cannot derive is stored:
 *
 *   u32 magic "RDLS" | u16 version (2) | u16 zero
 *   u64 epoch | u64 grant_seq | u64 next_session | u32 n_sessions | u32 n_locks
 *   n_sessions x { u64 id | u64 nonce | u64 last_seq | u32 ttl_ms | u32 uid | u32 gid
 *                  | u16 ns_len | ns[ns_len] | u64 src | u8 counted }
 *   n_locks x    { u16 name_len | name[name_len] | u64 holder | u64 holder_seq
 *                  | u64 token | u8 broken | u32 n_waiters
 *                  | n_waiters x { u64 session | u64 seq } }
 *   u64 hash of everything before (64-bit FNV-1a; the value rdlm_lease_sm_hash returns)
 *
 * One writer serves three uses: measuring (buf NULL), writing, and hashing (computed
 * in both). Restore checks the trailing hash (any damage of up to a byte is always
 * caught, more almost surely), then parses into a separate state and checks every
 * invariant of sm_state.h before it replaces anything. The limits are
 * not applied to a restored state: they gate new entries, a committed state is data.
 *
 * Version 1 (before identities) lacks src and counted: it restores with every session
 * uncounted (src 0), which is what the entries that made it decided.
 */
#include "sm_state.h"

#include <stdlib.h>
#include <string.h>

#include "byteorder.h"

#define RDLM_LEASE_SNAP_MAGIC 0x534c4452u /* "RDLS" */
#define RDLM_LEASE_SNAP_VERSION 2u
#define RDLM_LEASE_SNAP_VERSION_V1 1u   /* no src, no counted */
#define RDLM_LEASE_SNAP_SESSION_MIN 38u /* encoded session with an empty ns (v1) */
#define RDLM_LEASE_SNAP_LOCK_MIN 32u    /* encoded lock, 1-byte name, no waiter */
#define RDLM_LEASE_SNAP_WAITER 16u
#define RDLM_LEASE_FNV_OFFSET UINT64_C(0xcbf29ce484222325)
#define RDLM_LEASE_FNV_PRIME UINT64_C(0x100000001b3)

typedef struct rdlm_lease_out {
    uint8_t *buf; /**< NULL: measure and hash only */
    size_t len;
    uint64_t hash;
} rdlm_lease_out_t;

static uint64_t rdlm_lease_fnv(uint64_t hash, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        hash = (hash ^ p[i]) * RDLM_LEASE_FNV_PRIME;
    }
    return hash;
}

static void rdlm_lease_out_bytes(rdlm_lease_out_t *o, const void *p, size_t n)
{
    if (o->buf != NULL) {
        memcpy(o->buf + o->len, p, n);
    }
    o->hash = rdlm_lease_fnv(o->hash, p, n);
    o->len += n;
}

/* The low `bytes` bytes of v, little-endian. */
static void rdlm_lease_out_uint(rdlm_lease_out_t *o, uint64_t v, size_t bytes)
{
    uint8_t tmp[8];

    rdlm_le_put64(tmp, v);
    rdlm_lease_out_bytes(o, tmp, bytes);
}

static void rdlm_lease_serialise(const rdlm_lease_state_t *st, rdlm_lease_out_t *o)
{
    rdlm_lease_out_uint(o, RDLM_LEASE_SNAP_MAGIC, 4);
    rdlm_lease_out_uint(o, RDLM_LEASE_SNAP_VERSION, 2);
    rdlm_lease_out_uint(o, 0, 2);
    rdlm_lease_out_uint(o, st->epoch, 8);
    rdlm_lease_out_uint(o, st->grant_seq, 8);
    rdlm_lease_out_uint(o, st->next_session, 8);
    rdlm_lease_out_uint(o, st->n_sessions, 4);
    rdlm_lease_out_uint(o, st->n_locks, 4);
    for (size_t i = 0; i < st->n_sessions; i++) {
        const rdlm_lease_session_t *s = &st->sessions[i];
        rdlm_lease_out_uint(o, s->id, 8);
        rdlm_lease_out_uint(o, s->nonce, 8);
        rdlm_lease_out_uint(o, s->last_seq, 8);
        rdlm_lease_out_uint(o, s->ttl_ms, 4);
        rdlm_lease_out_uint(o, s->uid, 4);
        rdlm_lease_out_uint(o, s->gid, 4);
        rdlm_lease_out_uint(o, s->ns_len, 2);
        rdlm_lease_out_bytes(o, s->ns, s->ns_len);
        rdlm_lease_out_uint(o, s->src, 8);
        rdlm_lease_out_uint(o, s->counted, 1);
    }
    for (size_t i = 0; i < st->n_locks; i++) {
        const rdlm_lease_lock_t *l = st->locks[i];
        rdlm_lease_out_uint(o, l->name_len, 2);
        rdlm_lease_out_bytes(o, l->name, l->name_len);
        rdlm_lease_out_uint(o, l->holder, 8);
        rdlm_lease_out_uint(o, l->holder_seq, 8);
        rdlm_lease_out_uint(o, l->token, 8);
        rdlm_lease_out_uint(o, l->broken, 1);
        rdlm_lease_out_uint(o, l->n_waiters, 4);
        for (size_t k = 0; k < l->n_waiters; k++) {
            rdlm_lease_out_uint(o, l->waiters[k].session, 8);
            rdlm_lease_out_uint(o, l->waiters[k].seq, 8);
        }
    }
}

rdlm_status_t rdlm_lease_sm_snapshot(const rdlm_lease_sm_t *sm, void **buf_p, size_t *len_p)
{
    rdlm_lease_out_t o = {.buf = NULL, .len = 0, .hash = RDLM_LEASE_FNV_OFFSET};

    rdlm_lease_serialise(&sm->st, &o);
    o.buf = malloc(o.len + 8);
    if (o.buf == NULL) {
        return RDLM_ERR_NO_MEMORY;
    }
    o.len = 0;
    o.hash = RDLM_LEASE_FNV_OFFSET;
    rdlm_lease_serialise(&sm->st, &o);
    rdlm_le_put64(o.buf + o.len, o.hash);
    *buf_p = o.buf;
    *len_p = o.len + 8;
    return RDLM_OK;
}

uint64_t rdlm_lease_sm_hash(const rdlm_lease_sm_t *sm)
{
    rdlm_lease_out_t o = {.buf = NULL, .len = 0, .hash = RDLM_LEASE_FNV_OFFSET};

    rdlm_lease_serialise(&sm->st, &o);
    return o.hash;
}

/* A name or namespace of len bytes (max NAME_MAX) into dst, NUL-terminated. */
static int rdlm_lease_read_name(rdlm_le_reader_t *r, uint16_t len, char *dst)
{
    const uint8_t *p = len <= RDLM_LEASE_NAME_MAX ? rdlm_le_take(r, len) : NULL;

    if (p == NULL || !rdlm_le_printable(p, len)) {
        return 0;
    }
    memcpy(dst, p, len);
    dst[len] = '\0';
    return 1;
}

/* Room in the array *arr_p for the n entries the snapshot announces, each at least min
 * bytes on the wire: PROTOCOL if the rest of the snapshot cannot hold them (checked
 * first, so a forged count allocates nothing), NO_MEMORY if the array cannot grow. */
static rdlm_status_t rdlm_lease_restore_room(const rdlm_le_reader_t *r, size_t n, size_t min,
                                             void *arr_p, size_t *cap_p, size_t elem)
{
    if (n > r->left / min) {
        return RDLM_ERR_PROTOCOL;
    }
    if (rdlm_lease_grow(arr_p, cap_p, n, elem) != RDLM_OK) {
        return RDLM_ERR_NO_MEMORY;
    }
    return RDLM_OK;
}

static rdlm_status_t rdlm_lease_restore_sessions(rdlm_le_reader_t *r,
                                                 rdlm_lease_state_t *st, size_t n,
                                                 unsigned version)
{
    rdlm_status_t room = rdlm_lease_restore_room(r, n, RDLM_LEASE_SNAP_SESSION_MIN,
                                                 &st->sessions, &st->cap_sessions,
                                                 sizeof(st->sessions[0]));

    if (room != RDLM_OK) {
        return room;
    }
    for (size_t i = 0; i < n; i++) {
        rdlm_lease_session_t *s = &st->sessions[i];
        memset(s, 0, sizeof(*s));
        s->id = rdlm_le_read64(r);
        s->nonce = rdlm_le_read64(r);
        s->last_seq = rdlm_le_read64(r);
        s->ttl_ms = rdlm_le_read32(r);
        s->uid = rdlm_le_read32(r);
        s->gid = rdlm_le_read32(r);
        s->ns_len = rdlm_le_read16(r);
        if (!rdlm_lease_read_name(r, s->ns_len, s->ns)) {
            return RDLM_ERR_PROTOCOL;
        }
        if (version != RDLM_LEASE_SNAP_VERSION_V1) {
            s->src = rdlm_le_read64(r);
            s->counted = rdlm_le_read8(r);
        }
        if (r->bad || s->counted > 1 || s->id == 0 || s->id >= st->next_session ||
            (i > 0 && s->id <= s[-1].id) || s->ttl_ms < RDLM_LEASE_TTL_MIN_MS ||
            s->ttl_ms > RDLM_LEASE_TTL_MAX_MS) {
            return RDLM_ERR_PROTOCOL;
        }
        st->n_sessions = i + 1;
    }
    return RDLM_OK;
}

/* A token this state could have issued. */
static int rdlm_lease_token_ok(const rdlm_lease_state_t *st, uint64_t token)
{
    uint64_t epoch = token >> 40, seq = token & RDLM_LEASE_GRANT_SEQ_MAX;
    return epoch >= 1 && epoch <= st->epoch && seq >= 1 && seq <= st->grant_seq;
}

static rdlm_status_t rdlm_lease_restore_waiters(rdlm_le_reader_t *r, rdlm_lease_state_t *st,
                                                rdlm_lease_lock_t *l, size_t n, size_t mark)
{
    rdlm_status_t room;

    if (r->bad) {
        return RDLM_ERR_PROTOCOL;
    }
    room = rdlm_lease_restore_room(r, n, RDLM_LEASE_SNAP_WAITER, &l->waiters,
                                   &l->cap_waiters, sizeof(l->waiters[0]));
    if (room != RDLM_OK) {
        return room;
    }
    for (size_t k = 0; k < n; k++) {
        rdlm_lease_waiter_t *w = &l->waiters[k];
        rdlm_lease_session_t *s;
        w->session = rdlm_le_read64(r);
        w->seq = rdlm_le_read64(r);
        s = rdlm_lease_state_session(st, w->session);
        if (r->bad || s == NULL || w->session == l->holder || s->mark == mark ||
            w->seq == 0 || w->seq > s->last_seq) {
            return RDLM_ERR_PROTOCOL;
        }
        s->mark = mark;
        s->waiting++;
        st->waiters++;
        l->n_waiters = k + 1;
    }
    return RDLM_OK;
}

static rdlm_status_t rdlm_lease_restore_locks(rdlm_le_reader_t *r, rdlm_lease_state_t *st,
                                              size_t n)
{
    rdlm_status_t s = rdlm_lease_restore_room(r, n, RDLM_LEASE_SNAP_LOCK_MIN, &st->locks,
                                              &st->cap_locks, sizeof(st->locks[0]));

    for (size_t i = 0; i < n && s == RDLM_OK; i++) {
        rdlm_lease_lock_t *l = calloc(1, sizeof(*l));
        rdlm_lease_session_t *holder;
        if (l == NULL) {
            return RDLM_ERR_NO_MEMORY;
        }
        st->locks[i] = l;
        st->n_locks = i + 1;
        l->name_len = rdlm_le_read16(r);
        if (l->name_len == 0 || !rdlm_lease_read_name(r, l->name_len, l->name) ||
            (i > 0 && strcmp(st->locks[i - 1]->name, l->name) >= 0)) {
            return RDLM_ERR_PROTOCOL;
        }
        l->holder = rdlm_le_read64(r);
        l->holder_seq = rdlm_le_read64(r);
        l->token = rdlm_le_read64(r);
        l->broken = rdlm_le_read8(r);
        holder = rdlm_lease_state_session(st, l->holder);
        if (r->bad || holder == NULL || l->holder_seq == 0 ||
            l->holder_seq > holder->last_seq || !rdlm_lease_token_ok(st, l->token) ||
            l->broken > 1) {
            return RDLM_ERR_PROTOCOL;
        }
        holder->held++;
        s = rdlm_lease_restore_waiters(r, st, l, rdlm_le_read32(r), i + 1);
    }
    return s;
}

static int rdlm_lease_u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The session nonces are distinct and so are the holders' tokens. */
static rdlm_status_t rdlm_lease_restore_distinct(const rdlm_lease_state_t *st)
{
    size_t n = st->n_sessions > st->n_locks ? st->n_sessions : st->n_locks;
    uint64_t *v = malloc((n ? n : 1) * sizeof(*v));
    int ok = 1;

    if (v == NULL) {
        return RDLM_ERR_NO_MEMORY;
    }
    for (int pass = 0; ok && pass < 2; pass++) {
        size_t m = pass == 0 ? st->n_sessions : st->n_locks;
        for (size_t i = 0; i < m; i++) {
            v[i] = pass == 0 ? st->sessions[i].nonce : st->locks[i]->token;
        }
        qsort(v, m, sizeof(*v), rdlm_lease_u64_cmp);
        for (size_t i = 1; ok && i < m; i++) {
            ok = v[i] != v[i - 1];
        }
    }
    free(v);
    return ok ? RDLM_OK : RDLM_ERR_PROTOCOL;
}

/* The fixed header into st; the counts into *n_sessions_p, *n_locks_p. */
static rdlm_status_t rdlm_lease_restore_header(rdlm_le_reader_t *r, rdlm_lease_state_t *st,
                                               size_t *n_sessions_p, size_t *n_locks_p,
                                               unsigned *version_p)
{
    uint32_t magic = rdlm_le_read32(r);
    uint16_t version = rdlm_le_read16(r);
    uint16_t zero = rdlm_le_read16(r);

    st->epoch = rdlm_le_read64(r);
    st->grant_seq = rdlm_le_read64(r);
    st->next_session = rdlm_le_read64(r);
    *n_sessions_p = rdlm_le_read32(r);
    *n_locks_p = rdlm_le_read32(r);
    *version_p = version;
    if (r->bad || magic != RDLM_LEASE_SNAP_MAGIC ||
        (version != RDLM_LEASE_SNAP_VERSION && version != RDLM_LEASE_SNAP_VERSION_V1) ||
        zero != 0 || st->epoch < 1 || st->epoch > RDLM_LEASE_EPOCH_MAX ||
        st->grant_seq > RDLM_LEASE_GRANT_SEQ_MAX || st->next_session < 1) {
        return RDLM_ERR_PROTOCOL;
    }
    return RDLM_OK;
}

rdlm_status_t rdlm_lease_sm_restore(rdlm_lease_sm_t *sm, const void *buf, size_t len)
{
    size_t body = len >= 8 ? len - 8 : 0;
    rdlm_le_reader_t r = rdlm_le_reader(buf, body);
    rdlm_lease_state_t st;
    size_t n_sessions, n_locks;
    unsigned version;
    rdlm_status_t s;

    if (len < 8 || rdlm_lease_fnv(RDLM_LEASE_FNV_OFFSET, buf, body) !=
                       rdlm_le_get((const uint8_t *)buf + body, 8)) {
        return RDLM_ERR_PROTOCOL;
    }
    memset(&st, 0, sizeof(st));
    s = rdlm_lease_restore_header(&r, &st, &n_sessions, &n_locks, &version);
    if (s == RDLM_OK) {
        s = rdlm_lease_restore_sessions(&r, &st, n_sessions, version);
    }
    if (s == RDLM_OK) {
        s = rdlm_lease_restore_locks(&r, &st, n_locks);
    }
    if (s == RDLM_OK &&
        (r.bad || r.left != 0 || st.grant_seq + st.waiters > RDLM_LEASE_GRANT_SEQ_MAX)) {
        s = RDLM_ERR_PROTOCOL;
    }
    if (s == RDLM_OK) {
        s = rdlm_lease_restore_distinct(&st);
    }
    if (s != RDLM_OK) {
        rdlm_lease_state_clear(&st);
        return s;
    }
    rdlm_lease_state_clear(&sm->st);
    sm->st = st;
    return RDLM_OK;
}
