/*
 * librdlm.so loaded and unloaded again and again, as a plugin that links it is: each
 * load creates a context, opens handles (retired at the destroy) and unloads. The
 * heap in use must stop growing: before the unload freed the retired handles, each
 * cycle left them behind, unreachable (about 65 bytes a handle). Under ASan, whose
 * allocator mallinfo2 does not see, LeakSanitizer reports such blocks at exit.
 * usage: api_unload PATH_OF_LIBRDLM_SO
 */
#include <dlfcn.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <rdlm.h>

enum { CYCLES = 40, WARM = 8, HANDLES = 64 };

typedef rdlm_status_t (*create_f)(const rdlm_ctx_params_t *, rdlm_ctx_h *);
typedef void (*destroy_f)(rdlm_ctx_h);
typedef rdlm_status_t (*open_f)(rdlm_ctx_h, const char *, rdlm_lock_h *);

/* One load, context, HANDLES opens, destroy and unload; 0 or why not. */
static const char *cycle(const char *path, const char *job)
{
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    rdlm_ctx_params_t params = {.field_mask = RDLM_CTX_FIELD_JOB, .job = job};
    rdlm_ctx_h ctx;
    create_f create;
    destroy_f destroy;
    open_f open;

    if (lib == NULL) {
        return dlerror();
    }
    create = (create_f)dlsym(lib, "rdlm_ctx_create");
    destroy = (destroy_f)dlsym(lib, "rdlm_ctx_destroy");
    open = (open_f)dlsym(lib, "rdlm_lock_open");
    if (create == NULL || destroy == NULL || open == NULL) {
        return "a symbol is missing";
    }
    if (create(&params, &ctx) != RDLM_OK) {
        return "rdlm_ctx_create failed";
    }
    for (int i = 0; i < HANDLES; i++) {
        char name[16];
        rdlm_lock_h lock;

        snprintf(name, sizeof(name), "lock%d", i);
        if (open(ctx, name, &lock) != RDLM_OK) {
            destroy(ctx);
            return "rdlm_lock_open failed";
        }
    }
    destroy(ctx);
    return dlclose(lib) == 0 ? NULL : dlerror();
}

int main(int argc, char **argv)
{
    char job[32];
    size_t warm = 0, end;

    if (argc != 2) {
        fprintf(stderr, "usage: %s PATH_OF_LIBRDLM_SO\n", argv[0]);
        return 2;
    }
    snprintf(job, sizeof(job), "t-unload-%d", (int)getpid());
    for (int i = 0; i < CYCLES; i++) {
        const char *why = cycle(argv[1], job);

        if (why != NULL) {
            fprintf(stderr, "FAIL: cycle %d: %s\n", i, why);
            return 1;
        }
        if (i == WARM) {
            warm = mallinfo2().uordblks;
        }
    }
    end = mallinfo2().uordblks;
    printf("heap in use after cycle %d: %zu bytes, after cycle %d: %zu\n", WARM, warm,
           CYCLES - 1, end);
    /* Before the fix: about 4.2 kB a cycle (64 handles); since, 70-135 bytes a cycle
     * stay, from the libraries loaded with librdlm.so (1 kB a cycle is the bound). */
    if (end > warm + 1024 * (CYCLES - 1 - WARM)) {
        fprintf(stderr, "FAIL: the heap grew %zu bytes over %d cycles\n", end - warm,
                CYCLES - 1 - WARM);
        return 1;
    }
    return 0;
}
