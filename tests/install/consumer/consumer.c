/* An external program built against an installed rdlm: takes a lock, checks the
 * token and the version macros. Exit 0 on success. */
#include <stdio.h>
#include <string.h>

#include <rdlm.h>

int main(void)
{
    rdlm_ctx_params_t params = {.field_mask = RDLM_CTX_FIELD_JOB, .job = "install-consumer"};
    rdlm_ctx_h ctx;
    rdlm_lock_h lock;
    uint64_t token = 0;
    rdlm_status_t status;

#if RDLM_VERSION_NUMBER < RDLM_VERSION_ENCODE(0, 1, 0)
#error "version macros missing"
#endif
    if (strcmp(rdlm_get_version(), RDLM_VERSION_STRING) != 0) {
        fprintf(stderr, "header %s, library %s\n", RDLM_VERSION_STRING, rdlm_get_version());
        return 1;
    }
    status = rdlm_ctx_create(&params, &ctx);
    if (status != RDLM_OK) {
        fprintf(stderr, "rdlm_ctx_create: %s\n", rdlm_status_str(status));
        return 1;
    }
    status = rdlm_lock_open(ctx, "consumer", &lock);
    if (status == RDLM_OK) {
        status = rdlm_lock_acquire(lock, RDLM_TIMEOUT_INFINITE, &token);
    }
    if (status == RDLM_OK) {
        status = rdlm_lock_release(lock);
    }
    rdlm_ctx_destroy(ctx);
    printf("consumer: %s, token %llu\n", rdlm_status_str(status), (unsigned long long)token);
    return status == RDLM_OK && token != 0 ? 0 : 1;
}
