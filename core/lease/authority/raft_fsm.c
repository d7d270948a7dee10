/*
 * libraft glue (raft_fsm.h): struct raft_fsm version 1 over sm.h.
 *
 * Buffer ownership in libraft 0.15: snapshot() hands over a raft_malloc'd array of
 * buffers whose bases are raft_malloc'd (libraft raft_frees both); restore() owns
 * buf->base only when it succeeds; on failure libraft frees it itself.
 */
#include "raft_fsm.h"

#include <stdlib.h>
#include <string.h>

#include "byteorder.h"
#include "log.h"

#define RDLM_LEASE_RAFT_FSM_MARK_MAGIC 0x574c4452u /* "RDLW" */
#define RDLM_LEASE_RAFT_FSM_MARK_BYTES 20u

static int rdlm_lease_raft_fsm_apply(struct raft_fsm *fsm, const struct raft_buffer *buf,
                                     void **result)
{
    rdlm_lease_raft_fsm_t *a = fsm->data;

    rdlm_lease_sm_apply(a->sm, buf->base, buf->len, &a->last);
    rdlm_lease_witness_apply(&a->witness, buf->base, buf->len);
    a->applied++;
    if (a->last.status == RDLM_ERR_PROTOCOL) {
        /* The leader validates before logging: this entry comes from another
         * version or a bug. Every replica skips it alike. */
        rdlm_warn("lease: committed entry of %zu bytes does not decode; skipped", buf->len);
    }
    *result = &a->last;
    return 0;
}

static int rdlm_lease_raft_fsm_snapshot(struct raft_fsm *fsm, struct raft_buffer *bufs[],
                                        unsigned *n_bufs)
{
    rdlm_lease_raft_fsm_t *a = fsm->data;
    struct raft_buffer *out = raft_malloc(sizeof(*out));
    rdlm_lease_mark_t mark;
    void *snap = NULL;
    size_t len = 0;
    int known = rdlm_lease_witness_newest(&a->witness, &mark);

    if (out == NULL) {
        goto err;
    }
    if (rdlm_lease_sm_snapshot(a->sm, &snap, &len) != RDLM_OK) {
        goto err_out;
    }
    out->base = raft_malloc(len + (known ? RDLM_LEASE_RAFT_FSM_MARK_BYTES : 0));
    if (out->base == NULL) {
        goto err_snap;
    }
    memcpy(out->base, snap, len);
    out->len = len;
    if (known) {
        uint8_t *p = (uint8_t *)out->base + len;

        p = rdlm_le_put64(p, mark.n);
        p = rdlm_le_put64(p, mark.chain);
        rdlm_le_put32(p, RDLM_LEASE_RAFT_FSM_MARK_MAGIC);
        out->len += RDLM_LEASE_RAFT_FSM_MARK_BYTES;
    }
    free(snap);
    *bufs = out;
    *n_bufs = 1;
    return 0;

err_snap:
    free(snap);
err_out:
    raft_free(out);
err:
    rdlm_warn("lease: no memory for a snapshot of the state");
    return RAFT_NOMEM;
}

/* The mark a snapshot of len bytes ends with: 1 with *mark_p, or 0 (none). */
static int rdlm_lease_raft_fsm_mark(const uint8_t *p, size_t len, rdlm_lease_mark_t *mark_p)
{
    if (len < RDLM_LEASE_RAFT_FSM_MARK_BYTES ||
        rdlm_le_get(p + len - 4, 4) != RDLM_LEASE_RAFT_FSM_MARK_MAGIC) {
        return 0;
    }
    p += len - RDLM_LEASE_RAFT_FSM_MARK_BYTES;
    mark_p->n = rdlm_le_get(p, 8);
    mark_p->chain = rdlm_le_get(p + 8, 8);
    return 1;
}

static int rdlm_lease_raft_fsm_restore(struct raft_fsm *fsm, struct raft_buffer *buf)
{
    rdlm_lease_raft_fsm_t *a = fsm->data;
    rdlm_lease_mark_t mark = {0};
    int known = rdlm_lease_raft_fsm_mark(buf->base, buf->len, &mark);
    rdlm_status_t s = RDLM_ERR_PROTOCOL;

    if (known) {
        s = rdlm_lease_sm_restore(a->sm, buf->base,
                                  buf->len - RDLM_LEASE_RAFT_FSM_MARK_BYTES);
    }
    if (s == RDLM_ERR_PROTOCOL) { /* no mark, or a state that ends like one by chance */
        known = 0;
        s = rdlm_lease_sm_restore(a->sm, buf->base, buf->len);
    }
    if (s == RDLM_OK) {
        rdlm_lease_witness_restart(&a->witness, mark, known);
        if (!known) {
            rdlm_info("lease: snapshot without a mark (an older version): this replica "
                      "takes no part in divergence checks until its state is replaced");
        }
    }
    if (s != RDLM_OK) {
        rdlm_warn("lease: snapshot of %zu bytes refused: %s", buf->len, rdlm_status_str(s));
        return s == RDLM_ERR_NO_MEMORY ? RAFT_NOMEM : RAFT_MALFORMED;
    }
    raft_free(buf->base);
    return 0;
}

rdlm_status_t rdlm_lease_raft_fsm_init(rdlm_lease_raft_fsm_t *a, struct raft_fsm *fsm,
                                       const rdlm_lease_limits_t *limits)
{
    rdlm_status_t s;

    memset(a, 0, sizeof(*a));
    s = rdlm_lease_sm_create(limits, &a->sm);
    if (s != RDLM_OK) {
        return s;
    }
    rdlm_lease_witness_init(&a->witness);
    memset(fsm, 0, sizeof(*fsm));
    fsm->version = 1;
    fsm->data = a;
    fsm->apply = rdlm_lease_raft_fsm_apply;
    fsm->snapshot = rdlm_lease_raft_fsm_snapshot;
    fsm->restore = rdlm_lease_raft_fsm_restore;
    return RDLM_OK;
}

void rdlm_lease_raft_fsm_close(rdlm_lease_raft_fsm_t *a)
{
    if (a->sm == NULL) {
        return; /* never initialised, or closed already */
    }
    rdlm_lease_sm_destroy(a->sm);
    rdlm_lease_witness_fini(&a->witness);
    a->sm = NULL;
}
