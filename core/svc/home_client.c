/* A client context's links to its service's lock homes (svc.h, "Homes"). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client_internal.h"
#include "clock.h"
#include "cmd.h"
#include "hash.h"
#include "conn.h"
#include "home_layout.h"
#include "log.h"
#include "svc_internal.h"

/* Bounds of one HOMES request, the pause before asking a replica again that has not
 * applied the session yet, and the pause after a failed connect. */
#define RDLM_SVC_ASK_NS 2000000000ull
#define RDLM_SVC_AGAIN_NS 20000000ull
#define RDLM_SVC_RETRY_NS 200000000ull
/* How long a context's creation waits for a listed replica to describe its home (a
 * home serves once it committed its epoch, moments after a leader is elected). */
#define RDLM_SVC_OPEN_NS 10000000000ull

/* One HOMES request to the replica at addr, within session (needed under --auth
 * munge), answered by deadline: the description in d (decoded from buf), or the
 * reply's status. */
static rdlm_status_t rdlm_svc_ask_once(const char *addr, rdlm_session_h session,
                                       uint64_t deadline,
                                       uint8_t buf[RDLM_WIRE_MAX_PAYLOAD],
                                       rdlm_svc_desc_t *d)
{
    rdlm_lease_cmd_t cmd = {.op = RDLM_LEASE_OP_HOMES,
                            .session = rdlm_lease_session_id(session),
                            .nonce = rdlm_lease_session_nonce(session)};
    uint8_t req[RDLM_LEASE_CMD_MAX];
    size_t req_len = rdlm_lease_cmd_encode(&cmd, req, sizeof(req));
    rdlm_wire_kind_t kind;
    rdlm_lease_reply_t reply;
    uint32_t len;
    int fd = -1;
    rdlm_status_t st = rdlm_lease_conn_open(addr, deadline, &fd);

    if (st == RDLM_OK)
        st = rdlm_lease_conn_send(fd, RDLM_WIRE_REQUEST, req, (uint32_t)req_len, deadline);
    if (st == RDLM_OK)
        st = rdlm_lease_conn_recv_any(fd, buf, &kind, &len, deadline);
    rdlm_lease_conn_close(fd);
    if (st != RDLM_OK)
        return st == RDLM_ERR_PROTOCOL ? st : RDLM_ERR_UNAVAILABLE;
    if (kind == RDLM_WIRE_REPLY) {
        st = rdlm_wire_reply_decode(buf, len, &reply);
        return st != RDLM_OK ? st : (rdlm_status_t)reply.status;
    }
    st = kind == RDLM_WIRE_BLOB ? rdlm_svc_desc_decode(buf, len, d) : RDLM_ERR_PROTOCOL;
    if (st == RDLM_ERR_MISMATCH)
        rdlm_warn("svc: %s hosts a lock home of layout version %u, this librdlm speaks "
                  "another: run one rdlm release on clients and daemons",
                  addr, d->version);
    else if (st != RDLM_OK)
        rdlm_warn("svc: %s answered HOMES with a malformed description", addr);
    return st;
}

/* Ask the replica at addr for its home's description (into buf), again while it
 * has not applied the session's OPEN yet (RDLM_ERR_NOT_FOUND: a follower a heartbeat
 * behind the leader), within RDLM_SVC_ASK_NS. */
static rdlm_status_t rdlm_svc_ask(const char *addr, rdlm_session_h session,
                                  uint8_t buf[RDLM_WIRE_MAX_PAYLOAD], rdlm_svc_desc_t *d)
{
    uint64_t deadline = rdlm_clock_deadline(RDLM_SVC_ASK_NS);
    rdlm_status_t st = rdlm_svc_ask_once(addr, session, deadline, buf, d);

    while (st == RDLM_ERR_NOT_FOUND && rdlm_clock_now_ns() + RDLM_SVC_AGAIN_NS < deadline) {
        nanosleep(&(struct timespec){0, (long)RDLM_SVC_AGAIN_NS}, NULL);
        st = rdlm_svc_ask_once(addr, session, deadline, buf, d);
    }
    if (st == RDLM_ERR_NOT_FOUND || st == RDLM_ERR_AUTH)
        rdlm_warn("svc: %s refused HOMES within session %llu: %s", addr,
                  (unsigned long long)rdlm_lease_session_id(session), rdlm_status_name(st));
    return st;
}

/* Close what a link holds (its writer lock held). */
static void rdlm_svc_link_down(rdlm_svc_link_t *l)
{
    if (l->tl != NULL) {
        if (l->rkey != 0)
            l->tl->mem->rkey_release(l->tl, l->rkey);
        rdlm_tl_destroy(l->tl);
    }
    rdlm_tl_boot_relay_destroy(l->relay);
    l->tl = NULL;
    l->rkey = 0;
    l->relay = NULL;
    l->up = 0;
}

/* Draw a tag and publish this process's session id under it; a reconnect to the same
 * life of the home keeps the tag drawn before (words held under it stay ours). */
static rdlm_status_t rdlm_svc_link_register(rdlm_svc_t *svc, rdlm_svc_link_t *l,
                                            uint64_t epoch)
{
    uint64_t tag, sid = rdlm_lease_session_id(svc->session);
    rdlm_status_t st;

    if (l->tag != 0 && l->epoch == epoch)
        return RDLM_OK;
    st = rdlm_tl_fadd64(l->tl, l->rkey, RDLM_SVC_OFF_NEXT_TAG, 1, &tag);
    if (st != RDLM_OK)
        return st;
    if (tag == 0 || tag >= l->tags) {
        rdlm_error("svc: home %s has given out all its %u client tags: restart it", l->addr,
                   l->tags);
        return RDLM_ERR_NO_RESOURCE;
    }
    l->tag = (uint32_t)tag;
    st = l->tl->rma->put(l->tl, l->rkey, rdlm_svc_off_tag(l->tag), &sid, sizeof(sid));
    return st == RDLM_OK ? l->tl->setup->flush(l->tl, 0) : st;
}

/* Connect link l (its writer lock held). */
static rdlm_status_t rdlm_svc_link_up(rdlm_svc_t *svc, rdlm_svc_link_t *l)
{
    uint8_t buf[RDLM_WIRE_MAX_PAYLOAD];
    char label[RDLM_TL_PEER_LABEL_MAX];
    rdlm_tl_params_t tp = svc->tp;
    rdlm_svc_desc_t d;
    rdlm_status_t st = rdlm_svc_ask(l->addr, svc->session, buf, &d);

    if (st == RDLM_OK && d.self_id != l->id) {
        rdlm_error("svc: %s hosts the home of replica %u, not of replica %u as the "
                   "authority's members say: start every rdlmd with the same --peers",
                   l->addr, d.self_id, l->id);
        st = RDLM_ERR_MISMATCH;
    }
    if (st == RDLM_OK && d.slots == 0) {
        rdlm_error("svc: replica %u (%s) hosts no lock home now, others do: its locks "
                   "cannot be taken; give every rdlmd --home-slots 0 or none",
                   l->id, l->addr);
        st = RDLM_ERR_BAD_CONFIG;
    }
    if (st == RDLM_OK)
        st = rdlm_tl_boot_replay_create(d.rec, d.rec_len, &l->relay);
    if (st == RDLM_OK) {
        tp.bootstrap = rdlm_tl_boot_relay_get(l->relay);
        snprintf(label, sizeof(label), "the lock home of replica %u at %s", l->id, l->addr);
        tp.peer_label = label;
        st = rdlm_tl_open("ucx", &tp, &l->tl);
    }
    if (st == RDLM_OK)
        st = l->tl->mem->rkey_unpack(l->tl, 0, d.rkey, d.rkey_len, &l->rkey);
    if (st == RDLM_OK) {
        l->slots = d.slots;
        l->tags = d.tags;
        st = rdlm_svc_link_register(svc, l, d.epoch);
    }
    if (st == RDLM_OK)
        l->epoch = d.epoch;
    if (st != RDLM_OK) {
        rdlm_svc_link_down(l);
        return st;
    }
    l->up = 1;
    rdlm_info("svc: home %s: epoch %llu, %u lock slots, tag %u", l->addr,
              (unsigned long long)l->epoch, l->slots, l->tag);
    return RDLM_OK;
}

rdlm_status_t rdlm_svc_link_get(rdlm_svc_t *svc, uint32_t h, rdlm_svc_link_t **link_p)
{
    rdlm_svc_link_t *l = &svc->links[h];
    rdlm_status_t st = RDLM_OK;

    pthread_rwlock_rdlock(&l->lock);
    if (l->up && !rdlm_load(&l->dead, RDLM_ACQUIRE)) {
        *link_p = l;
        return RDLM_OK;
    }
    pthread_rwlock_unlock(&l->lock);
    pthread_rwlock_wrlock(&l->lock);
    if (rdlm_load(&l->dead, RDLM_ACQUIRE)) {
        rdlm_warn("svc: home %s died; reconnecting on use", l->addr);
        rdlm_svc_link_down(l);
        rdlm_store(&l->dead, 0, RDLM_RELEASE);
    }
    if (!l->up && rdlm_clock_now_ns() < l->retry_ns) {
        st = RDLM_ERR_UNAVAILABLE; /* the last attempt failed moments ago */
    } else if (!l->up) {
        st = rdlm_svc_link_up(svc, l);
        if (st != RDLM_OK) {
            l->retry_ns = rdlm_clock_now_ns() + RDLM_SVC_RETRY_NS;
            rdlm_debug("svc: home %s: %s", l->addr, rdlm_status_name(st));
        }
    }
    pthread_rwlock_unlock(&l->lock);
    if (st != RDLM_OK)
        return st;
    return rdlm_svc_link_get(svc, h, link_p); /* up now (or dead again: one more round) */
}

void rdlm_svc_link_put(rdlm_svc_link_t *l, rdlm_status_t status)
{
    if (status == RDLM_ERR_PEER_DEAD)
        rdlm_store(&l->dead, 1, RDLM_RELEASE);
    pthread_rwlock_unlock(&l->lock);
}

/* 1 if descriptions a and b name the same members. */
static int rdlm_svc_same_members(const rdlm_svc_desc_t *a, const rdlm_svc_desc_t *b)
{
    if (a->n_members != b->n_members)
        return 0;
    for (uint32_t i = 0; i < a->n_members; i++) {
        if (a->members[i].id != b->members[i].id ||
            strcmp(a->members[i].addr, b->members[i].addr) != 0)
            return 0;
    }
    return 1;
}

/* The authority's members (*m: from the HOMES answers of the listed replicas, which
 * must agree; with or without a home), asked of every listed replica in rounds until
 * one answers, up to deadline. RDLM_ERR_UNSUPPORTED if one serves no HOMES at all (an
 * authority run inside a job; rdlmd answers with a description, --home-slots 0
 * included), RDLM_ERR_BAD_CONFIG if two disagree, RDLM_ERR_UNAVAILABLE if none
 * answered; logged. */
static rdlm_status_t rdlm_svc_members(const rdlm_lease_addrs_t *addrs,
                                      rdlm_session_h session, uint64_t deadline,
                                      rdlm_svc_desc_t *m)
{
    uint8_t buf[RDLM_WIRE_MAX_PAYLOAD];
    rdlm_svc_desc_t d;
    unsigned from = 0; /* the replica whose answer *m is */
    int have = 0;

    for (;;) {
        for (unsigned i = 0; i < addrs->count; i++) {
            rdlm_status_t st = rdlm_svc_ask(addrs->addr[i], session, buf, &d);

            if (st == RDLM_ERR_UNSUPPORTED) {
                rdlm_warn("svc: %s serves no lock homes (an authority run inside a job): "
                          "this context's locks are node-local, not service-wide",
                          addrs->addr[i]);
                return RDLM_ERR_UNSUPPORTED;
            }
            if (st == RDLM_OK && have && !rdlm_svc_same_members(m, &d)) {
                rdlm_error("svc: replicas %s and %s name other members: start every "
                           "rdlmd with the same --peers",
                           addrs->addr[from], addrs->addr[i]);
                return RDLM_ERR_BAD_CONFIG;
            }
            if (st == RDLM_OK && !have) {
                *m = d;
                from = i;
                have = 1;
            }
        }
        if (have || rdlm_clock_now_ns() + RDLM_SVC_RETRY_NS >= deadline)
            break;
        nanosleep(&(struct timespec){0, (long)RDLM_SVC_RETRY_NS}, NULL);
    }
    if (!have)
        rdlm_error("svc: no replica of %u listed described its lock home within %llu s",
                   addrs->count, (unsigned long long)(RDLM_SVC_OPEN_NS / 1000000000ull));
    return have ? RDLM_OK : RDLM_ERR_UNAVAILABLE;
}

/* Whether the members m host lock homes, asked of each member at its address in
 * rounds up to deadline. Homes are on at all of them or at none: one that hosts one
 * and another that says it has none are RDLM_ERR_BAD_CONFIG (a client that kept its
 * locks node-local beside others' service-wide ones would hold a lock they hold).
 * RDLM_OK (a home answered, none said it had none: the members that did not answer
 * may be down), RDLM_ERR_UNSUPPORTED (every member said it has none: node-local locks
 * for everyone), RDLM_ERR_UNAVAILABLE (no home answered, and a member that did not
 * answer may host one), RDLM_ERR_BAD_CONFIG (also: a member naming other members);
 * logged. */
static rdlm_status_t rdlm_svc_homes_agree(const rdlm_svc_desc_t *m, rdlm_session_h session,
                                          uint64_t deadline)
{
    uint8_t buf[RDLM_WIRE_MAX_PAYLOAD];
    rdlm_svc_desc_t d;
    int with = -1, without = -1, silent = -1; /* a member of each kind */

    for (;;) {
        for (uint32_t i = 0; i < m->n_members; i++) {
            rdlm_status_t st = rdlm_svc_ask(m->members[i].addr, session, buf, &d);

            if (st == RDLM_OK && !rdlm_svc_same_members(m, &d)) {
                rdlm_error("svc: replica %s names other members than the others: start "
                           "every rdlmd with the same --peers",
                           m->members[i].addr);
                return RDLM_ERR_BAD_CONFIG;
            }
            if (st == RDLM_OK && d.slots != 0)
                with = (int)i;
            else if (st == RDLM_OK || st == RDLM_ERR_UNSUPPORTED)
                without = (int)i;
            else
                silent = (int)i;
        }
        if (with >= 0 && without >= 0) {
            rdlm_error("svc: replica %s hosts a lock home and replica %s none (rdlmd "
                       "--home-slots 0): give every rdlmd --home-slots 0 or none",
                       m->members[with].addr, m->members[without].addr);
            return RDLM_ERR_BAD_CONFIG;
        }
        if (with >= 0 || silent < 0 || rdlm_clock_now_ns() + RDLM_SVC_RETRY_NS >= deadline)
            break;
        silent = -1;
        nanosleep(&(struct timespec){0, (long)RDLM_SVC_RETRY_NS}, NULL);
    }
    if (with >= 0)
        return RDLM_OK;
    if (silent < 0) {
        rdlm_warn("svc: no replica of the authority hosts a lock home (rdlmd --home-slots "
                  "0): this context's locks are node-local, not service-wide");
        return RDLM_ERR_UNSUPPORTED;
    }
    rdlm_error("svc: replica %s did not describe its lock home within %llu s%s: cannot "
               "tell whether this authority's locks are service-wide",
               m->members[silent].addr,
               (unsigned long long)(RDLM_SVC_OPEN_NS / 1000000000ull),
               without >= 0 ? " and others host none" : "");
    return RDLM_ERR_UNAVAILABLE;
}

rdlm_status_t rdlm_svc_open(const char *authority, rdlm_session_h session,
                            const rdlm_config_t *cfg, const rdlm_atomic_u32_t *closing,
                            rdlm_svc_t **svc_p)
{
    uint64_t deadline = rdlm_clock_deadline(RDLM_SVC_OPEN_NS);
    rdlm_lease_addrs_t addrs;
    rdlm_svc_desc_t m;
    rdlm_svc_t *svc;
    rdlm_status_t st = rdlm_lease_addrs_parse(authority, &addrs);

    if (st != RDLM_OK || session == NULL)
        return RDLM_ERR_INVALID_ARG;
    st = rdlm_svc_members(&addrs, session, deadline, &m);
    if (st == RDLM_OK)
        st = rdlm_svc_homes_agree(&m, session, deadline);
    if (st != RDLM_OK)
        return st;
    svc = calloc(1, sizeof(*svc));
    if (svc != NULL) {
        svc->locks_cap = cfg->capacity;
        svc->locks = calloc(svc->locks_cap, sizeof(*svc->locks));
    }
    if (svc == NULL || svc->locks == NULL) {
        free(svc);
        return RDLM_ERR_NO_MEMORY;
    }
    svc->session = session;
    svc->closing = closing;
    svc->bypass_ns = (uint64_t)cfg->lock_bypass_us * 1000u;
    svc->planted_no_want = getenv("RDLMTEST_SVC_NO_WANT") != NULL;
    svc->planted_reset = getenv("RDLMTEST_SVC_RECLAIM_RESET") != NULL;
    svc->planted_no_check = getenv("RDLMTEST_SVC_RECLAIM_NO_CHECK") != NULL;
    svc->test_claim_stop = getenv("RDLMTEST_SVC_CLAIM_STOP") != NULL;
    rdlm_tl_params_from_config(cfg, &svc->tp);
    svc->tp.thread_mode = RDLM_TL_THREAD_MULTI;
    svc->tp.progress_thread = 0;
    svc->tp.peer_failure = RDLM_SWITCH_ON; /* a home is another process */
    /* The homes by replica id, reached at the members' addresses: every client places
     * a lock at the same home, however its RDLM_AUTHORITY spells or lists them. */
    svc->n = m.n_members;
    for (uint32_t h = 0; h < svc->n; h++) {
        svc->links[h].id = m.members[h].id;
        memcpy(svc->links[h].addr, m.members[h].addr, sizeof(svc->links[h].addr));
        pthread_rwlock_init(&svc->links[h].lock, NULL);
        pthread_mutex_init(&svc->links[h].op_lock, NULL);
    }
    pthread_mutex_init(&svc->locks_lock, NULL);
    *svc_p = svc;
    return RDLM_OK;
}

void rdlm_svc_close(rdlm_svc_t *svc)
{
    if (svc == NULL)
        return;
    for (uint32_t h = 0; h < svc->n; h++) {
        rdlm_svc_link_down(&svc->links[h]);
        pthread_rwlock_destroy(&svc->links[h].lock);
        pthread_mutex_destroy(&svc->links[h].op_lock);
    }
    pthread_mutex_destroy(&svc->locks_lock);
    free(svc->locks);
    free(svc);
}

uint64_t rdlm_svc_home_ops(rdlm_svc_t *svc)
{
    uint64_t n = 0;

    for (uint32_t h = 0; h < svc->n; h++)
        n += rdlm_load(&svc->links[h].ops, RDLM_RELAXED);
    return n;
}

uint64_t rdlm_svc_lock_id(const rdlm_svc_t *svc, uint64_t name_id)
{
    uint64_t id = rdlm_hash_in(rdlm_lease_session_namespace(svc->session), name_id);

    /* A slot key keeps the high 48 bits (home_layout.h): all zero would name no lock. */
    return id >> 16 != 0 ? id : id | UINT64_C(1) << 16;
}

uint32_t rdlm_svc_home_of(const rdlm_svc_t *svc, uint64_t id)
{
    return (uint32_t)(id % svc->n);
}
