/* Same-host processes of a distributed context and their liveness (peers.h). */
#include "peers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "proc.h"

void rdlm_global_procid_self(rdlm_global_procid_t *id_p)
{
    struct stat st;
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

    memset(id_p, 0, sizeof(*id_p));
    if (f != NULL) {
        if (fgets(id_p->boot, sizeof(id_p->boot), f) == NULL) {
            id_p->boot[0] = '\0';
        }
        fclose(f);
    }
    id_p->pid_ns = stat("/proc/self/ns/pid", &st) == 0 ? (uint64_t)st.st_ino : 0;
    id_p->pid = (int32_t)getpid();
    id_p->start_time = rdlm_proc_start_time(getpid());
}

rdlm_global_proc_t *rdlm_global_procs_new(const rdlm_global_procid_t *all, uint32_t size,
                                          uint32_t self)
{
    rdlm_global_proc_t *procs = calloc(size, sizeof(*procs));
    const rdlm_global_procid_t *me = &all[self];

    if (procs == NULL) {
        rdlm_error("dist: no memory for %u process records", size);
        return NULL;
    }
    for (uint32_t r = 0; r < size; r++) {
        const rdlm_global_procid_t *id = &all[r];

        if (r != self && me->boot[0] != '\0' && me->pid_ns != 0 && id->start_time != 0 &&
            strncmp(id->boot, me->boot, sizeof(id->boot)) == 0 &&
            id->pid_ns == me->pid_ns) {
            procs[r].pid = id->pid;
            procs[r].start_time = id->start_time;
        }
    }
    return procs;
}

int rdlm_global_proc_gone(rdlm_global_proc_t *procs, uint32_t rank)
{
    rdlm_global_proc_t *p = &procs[rank];

    if (p->pid == 0) {
        return 0;
    }
    if (rdlm_load(&p->gone, RDLM_ACQUIRE)) {
        return 1;
    }
    if (rdlm_proc_alive(p->pid, p->start_time)) {
        return 0;
    }
    rdlm_store(&p->gone, 1, RDLM_RELEASE);
    return 1;
}
