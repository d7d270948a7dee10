/*
 * rdlm_info's configuration section (-c): the table of util/include/config.h with each
 * variable's effective value, default and source, as text, as "config:" lines
 * (--parsable) or as README.md's Markdown table (--config-markdown).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "rdlm_info.h"
#include "segment.h"

/* The value a context created now would use (for RDLM_JOB the effective job, not the
 * variable) into buf, and where it comes from: "env", "default", or the launcher
 * variable that named the job. */
static const char *rdlm_info_config_value(const rdlm_config_t *cfg, rdlm_config_index_t i,
                                          char *buf, size_t len)
{
    const char *var = rdlm_config_entry(i)->var;
    char job[RDLM_JOB_MAX + 1];
    const char *from;

    if (i != RDLM_CONFIG_INDEX_job) {
        rdlm_config_value(cfg, i, buf, len);
        return getenv(var) != NULL ? "env" : "default";
    }
    from = rdlm_config_job_effective(cfg, job);
    snprintf(buf, len, "%s", job);
    if (from == NULL) {
        return "default";
    }
    return strcmp(from, var) == 0 ? "env" : from;
}

static void rdlm_info_config_parsable(const rdlm_config_t *cfg)
{
    char value[RDLM_ADDRS_MAX];

    for (unsigned i = 0; i < RDLM_CONFIG_COUNT; i++) {
        const rdlm_config_entry_t *e = rdlm_config_entry((rdlm_config_index_t)i);
        const char *source =
            rdlm_info_config_value(cfg, (rdlm_config_index_t)i, value, sizeof(value));

        printf("config:%s:value:%s\n", e->var, value);
        printf("config:%s:default:%s\n", e->var, e->def);
        printf("config:%s:allowed:%s\n", e->var, e->allowed);
        printf("config:%s:source:%s\n", e->var, source);
        printf("config:%s:help:%s\n", e->var, e->help);
    }
}

static void rdlm_info_config_text(const rdlm_config_t *cfg)
{
    char value[RDLM_ADDRS_MAX];

    printf("configuration:\n");
    for (unsigned i = 0; i < RDLM_CONFIG_COUNT; i++) {
        const rdlm_config_entry_t *e = rdlm_config_entry((rdlm_config_index_t)i);
        const char *source =
            rdlm_info_config_value(cfg, (rdlm_config_index_t)i, value, sizeof(value));

        printf("  %-22s = %-8s (%s", e->var, value[0] ? value : "\"\"", source);
        if (strcmp(source, "default") != 0) {
            printf("; default \"%s\"", e->def);
        }
        printf(")\t# %s\n", e->help);
    }
    printf("segment:\n");
    printf("  name       : %s/<job>.seg, mode 0600 (directory mode 0700)\n",
           cfg->shm_dir[0] != '\0' ? cfg->shm_dir : "/dev/shm/rdlm-<uid>");
    printf("  bytes      : %llu for %u objects and %u process slots\n",
           (unsigned long long)rdlm_segment_bytes(cfg->capacity, cfg->max_procs),
           cfg->capacity, cfg->max_procs);
    printf("  per object : %d B entry + %d B name\n", RDLM_CACHE_LINE, RDLM_NAME_BYTES);
}

int rdlm_info_config(const rdlm_config_t *cfg, int parsable)
{
    if (cfg == NULL) {
        if (!parsable) {
            printf("configuration:\n  invalid (see the error above)\n");
        }
        return 2;
    }
    if (parsable) {
        rdlm_info_config_parsable(cfg);
    } else {
        rdlm_info_config_text(cfg);
    }
    return 0;
}

void rdlm_info_config_markdown(void)
{
    printf("| variable | default | values | meaning |\n|---|---|---|---|\n");
    for (unsigned i = 0; i < RDLM_CONFIG_COUNT; i++) {
        const rdlm_config_entry_t *e = rdlm_config_entry((rdlm_config_index_t)i);

        printf("| `%s` | %s%s%s | %s | %s |\n", e->var, e->def[0] ? "`" : "",
               e->def[0] ? e->def : "—", e->def[0] ? "`" : "", e->allowed, e->help);
    }
}
