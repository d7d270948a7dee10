/* Test helper for tools.rdlm_info.cleanup: create a node-only context (its job from
 * RDLM_JOB), print "ready", and hold the segment until killed. Exit 1 if the context
 * cannot be created. */
#include <stdio.h>
#include <unistd.h>

#include <rdlm.h>

int main(void)
{
    rdlm_ctx_h ctx;

    if (rdlm_ctx_create(NULL, &ctx) != RDLM_OK) {
        return 1;
    }
    printf("ready\n");
    fflush(stdout);
    for (;;) {
        pause();
    }
}
