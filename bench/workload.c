/* The batched workload; see workload.h. */
#include "workload.h"

int rdlm_bench_batches(const rdlm_bench_part_t *p, uint64_t n, rdlm_bench_tally_t *t)
{
    uint64_t batch = p->batch ? p->batch : 1, t0 = rdlm_bench_now_ns(), done, k, now;

    for (done = 0; done < n; done += k) {
        k = n - done < batch ? n - done : batch;
        if (p->cycles(p->self, k) != 0) {
            return -1;
        }
        now = rdlm_bench_now_ns();
        if (k == batch && p->sampler != NULL) {
            rdlm_bench_sampler_add(p->sampler, now - t0);
        }
        t0 = now;
        if (now >= p->deadline_ns) {
            done += k;
            break;
        }
    }
    t->ops += done;
    return 0;
}
