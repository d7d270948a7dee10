/*
 * rdlm_info's sections beyond the build options and topology, which rdlm_info.c
 * prints itself. Each prints on stdout.
 */
#ifndef RDLM_INFO_H
#define RDLM_INFO_H

#include "config.h"

/** -d: the transports built, which open here, and RDLM_TRANSPORT's capabilities
 *  (opens each backend once; slow with UCX). */
void rdlm_info_transports(const rdlm_config_t *cfg);

/** -d -p: one "transport:NAME:FIELD:VALUE" line per fact: for every backend built,
 *  usable (yes/no), reason (when not), chosen (is RDLM_TRANSPORT: yes/no), UCX's
 *  version and transports, verbs' connect method; the chosen usable one's
 *  operations, atomic_domain, target_progress, threads, serialized_by_rdlm,
 *  am_payload. */
void rdlm_info_transports_parsable(const rdlm_config_t *cfg);

/**
 * -c: every entry of the configuration table with its effective value, default and
 * source (env, default, or for RDLM_JOB the launcher variable it came from), then the
 * segment it implies. parsable: one "config:NAME:field:value" line per field instead.
 * cfg NULL: the environment's configuration is invalid (already logged); says so.
 * Returns 0, or 2 when cfg is NULL.
 */
int rdlm_info_config(const rdlm_config_t *cfg, int parsable);

/** --config-markdown: the table of variables, defaults and meanings, as README.md's
 *  configuration section holds it (scripts/config-table.sh). */
void rdlm_info_config_markdown(void);

/**
 * --cleanup: rdlm_segment_reap every job of the calling user with files in the place
 * of dir (RDLM_SHM_DIR; place.h), then in /dev/shm under an earlier version's names
 * (only job and its distributed contexts' node segments when job is not NULL),
 * printing one "removed JOB: ...", "would remove JOB: ..." (dry_run) or "kept JOB:
 * why" line each (JOB followed by " (an earlier version's name in /dev/shm)" for
 * those), then "cleanup: N removed, M kept". Returns 0; 1 if a directory cannot be
 * listed or is refused (one error line on stderr; the other is still cleaned).
 */
int rdlm_info_cleanup(const char *dir, const char *job, int dry_run);

#endif
