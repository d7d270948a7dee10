/*
 * The contexts the svc tests' child processes open: a job of their own, tagged with
 * the pid (so that two rounds of one test never share a job), with one lock open.
 */
#ifndef RDLM_TEST_SVC_CTX_H
#define RDLM_TEST_SVC_CTX_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <rdlm.h>

/* A context of job "<job>-<pid>" (RDLM_JOB) with name open in *lock_p; NULL on
 * failure (a child reports by its exit status). */
static inline rdlm_ctx_h svc_ctx_with_lock(const char *job, const char *name,
                                           rdlm_lock_h *lock_p)
{
    char tagged[64];
    rdlm_ctx_h ctx;

    snprintf(tagged, sizeof(tagged), "%s-%d", job, (int)getpid());
    setenv("RDLM_JOB", tagged, 1);
    if (rdlm_ctx_create(NULL, &ctx) != RDLM_OK)
        return NULL;
    if (rdlm_lock_open(ctx, name, lock_p) != RDLM_OK) {
        rdlm_ctx_destroy(ctx);
        return NULL;
    }
    return ctx;
}

#endif
