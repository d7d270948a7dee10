/*
 * Lease-authority commands: one validator shared by encode and decode, so what is sent
 * and what is accepted follow the same rules (cmd.h). Pure: no logging, no allocation.
 */
#include "cmd.h"

#include <string.h>

#include "byteorder.h"

static const char *const rdlm_lease_op_names[RDLM_LEASE_OP_MAX_ + 1] = {
    [RDLM_LEASE_OP_OPEN] = "OPEN",       [RDLM_LEASE_OP_RENEW] = "RENEW",
    [RDLM_LEASE_OP_CLOSE] = "CLOSE",     [RDLM_LEASE_OP_ACQUIRE] = "ACQUIRE",
    [RDLM_LEASE_OP_RELEASE] = "RELEASE", [RDLM_LEASE_OP_CANCEL] = "CANCEL",
    [RDLM_LEASE_OP_EPOCH] = "EPOCH",     [RDLM_LEASE_OP_STATUS] = "STATUS",
    [RDLM_LEASE_OP_EXPIRE] = "EXPIRE",   [RDLM_LEASE_OP_FATE] = "FATE",
    [RDLM_LEASE_OP_HOMES] = "HOMES",
};

const char *rdlm_lease_op_name(unsigned op)
{
    if (op == 0 || op > RDLM_LEASE_OP_MAX_) {
        return "?";
    }
    return rdlm_lease_op_names[op];
}

int rdlm_lease_op_is_logged(unsigned op)
{
    switch (op) {
    case RDLM_LEASE_OP_OPEN:
    case RDLM_LEASE_OP_CLOSE:
    case RDLM_LEASE_OP_ACQUIRE:
    case RDLM_LEASE_OP_RELEASE:
    case RDLM_LEASE_OP_CANCEL:
    case RDLM_LEASE_OP_EPOCH:
    case RDLM_LEASE_OP_EXPIRE:
        return 1;
    default:
        return 0;
    }
}

/* The rules of cmd.h over a command whose name_len and cred_len are already known to
 * be within their maxima. */
static int rdlm_lease_cmd_valid(const rdlm_lease_cmd_t *cmd)
{
    unsigned op = cmd->op;
    int is_open = op == RDLM_LEASE_OP_OPEN;
    int needs_name = op == RDLM_LEASE_OP_ACQUIRE || op == RDLM_LEASE_OP_RELEASE ||
                     op == RDLM_LEASE_OP_CANCEL;
    unsigned flags_ok = op == RDLM_LEASE_OP_ACQUIRE ? RDLM_LEASE_ACQ_TRY
                        : is_open                   ? RDLM_LEASE_OPEN_COUNTED
                                                    : 0u;

    if (op == 0 || op > RDLM_LEASE_OP_MAX_ || (cmd->flags & ~flags_ok) != 0) {
        return 0;
    }
    if ((needs_name && cmd->name_len == 0) ||
        (!needs_name && !is_open && cmd->name_len != 0) ||
        !rdlm_le_printable(cmd->name, cmd->name_len)) {
        return 0;
    }
    if (is_open
            ? (cmd->ttl_ms < RDLM_LEASE_TTL_MIN_MS || cmd->ttl_ms > RDLM_LEASE_TTL_MAX_MS)
            : (cmd->ttl_ms != 0 || cmd->cred_len != 0)) {
        return 0;
    }
    if ((cmd->cred_len != 0 && cmd->cred == NULL) ||
        (op == RDLM_LEASE_OP_EPOCH && cmd->token > RDLM_LEASE_EPOCH_MAX) ||
        (op == RDLM_LEASE_OP_FATE && cmd->token == 0)) {
        return 0;
    }
    return is_open || op == RDLM_LEASE_OP_STATUS || op == RDLM_LEASE_OP_HOMES ||
           cmd->session != 0;
}

size_t rdlm_lease_cmd_encode(const rdlm_lease_cmd_t *cmd, uint8_t *buf, size_t cap)
{
    size_t len = RDLM_LEASE_CMD_FIXED + (size_t)cmd->name_len + cmd->cred_len;
    uint8_t *p = buf;

    if (cmd->name_len > RDLM_LEASE_NAME_MAX || cmd->cred_len > RDLM_LEASE_CRED_MAX ||
        !rdlm_lease_cmd_valid(cmd) || len > cap) {
        return 0;
    }
    p = rdlm_le_put8(p, cmd->op);
    p = rdlm_le_put8(p, cmd->flags);
    p = rdlm_le_put16(p, cmd->name_len);
    p = rdlm_le_put32(p, cmd->ttl_ms);
    p = rdlm_le_put32(p, cmd->timeout_ms);
    p = rdlm_le_put32(p, cmd->uid);
    p = rdlm_le_put32(p, cmd->gid);
    p = rdlm_le_put64(p, cmd->session);
    p = rdlm_le_put64(p, cmd->seq);
    p = rdlm_le_put64(p, cmd->nonce);
    p = rdlm_le_put64(p, cmd->token);
    p = rdlm_le_put16(p, cmd->cred_len);
    memcpy(p, cmd->name, cmd->name_len);
    if (cmd->cred_len != 0) {
        memcpy(p + cmd->name_len, cmd->cred, cmd->cred_len);
    }
    return len;
}

rdlm_status_t rdlm_lease_cmd_decode(const uint8_t *buf, size_t len, rdlm_lease_cmd_t *cmd_p)
{
    rdlm_le_reader_t r = rdlm_le_reader(buf, len);
    const uint8_t *name;

    cmd_p->op = rdlm_le_read8(&r);
    cmd_p->flags = rdlm_le_read8(&r);
    cmd_p->name_len = rdlm_le_read16(&r);
    cmd_p->ttl_ms = rdlm_le_read32(&r);
    cmd_p->timeout_ms = rdlm_le_read32(&r);
    cmd_p->uid = rdlm_le_read32(&r);
    cmd_p->gid = rdlm_le_read32(&r);
    cmd_p->session = rdlm_le_read64(&r);
    cmd_p->seq = rdlm_le_read64(&r);
    cmd_p->nonce = rdlm_le_read64(&r);
    cmd_p->token = rdlm_le_read64(&r);
    cmd_p->cred_len = rdlm_le_read16(&r);
    if (r.bad || cmd_p->name_len > RDLM_LEASE_NAME_MAX ||
        cmd_p->cred_len > RDLM_LEASE_CRED_MAX ||
        r.left != (size_t)cmd_p->name_len + cmd_p->cred_len) {
        return RDLM_ERR_PROTOCOL;
    }
    name = rdlm_le_take(&r, cmd_p->name_len);
    memcpy(cmd_p->name, name, cmd_p->name_len);
    cmd_p->name[cmd_p->name_len] = '\0';
    cmd_p->cred = cmd_p->cred_len != 0 ? rdlm_le_take(&r, cmd_p->cred_len) : NULL;
    return rdlm_lease_cmd_valid(cmd_p) ? RDLM_OK : RDLM_ERR_PROTOCOL;
}
