/*
 * 64-bit ids of names, shared by the node segment's object table (core/local) and the
 * lease authority's namespaces (core/lease, core/svc): FNV-1a, then the murmur3
 * finaliser to spread FNV's weak high bits over the whole word. Pure.
 */
#ifndef RDLM_UTIL_HASH_H
#define RDLM_UTIL_HASH_H

#include <stdint.h>

/** The murmur3 finaliser of h, never 0 (0 marks "none" wherever ids are stored). */
static inline uint64_t rdlm_hash_final(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h != 0 ? h : 1;
}

/** 64-bit id of the NUL-terminated string s; never 0. */
static inline uint64_t rdlm_hash_name(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;

    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        h = (h ^ *p) * 0x100000001b3ull;
    }
    return rdlm_hash_final(h);
}

/** The id of id inside namespace ns (both ids as above; ns 0: id itself); never 0. */
static inline uint64_t rdlm_hash_in(uint64_t ns, uint64_t id)
{
    return ns == 0 ? id : rdlm_hash_final(id ^ (ns * 0x9e3779b97f4a7c15ull + (ns >> 29)));
}

#endif
