/*
 * One mapping per process per segment: contexts of the same job in one process share
 * it (fewer mappings; and tools such as TSan see one address per shared word). Keyed
 * by the segment file's (device, inode), so a mapping inherited across fork() of a
 * segment that has since been replaced is never reused.
 */
#ifndef RDLM_MAPPING_H
#define RDLM_MAPPING_H

#include <stddef.h>
#include <sys/stat.h>

/** Map fd (bytes long, identified by st), or take another reference on this
 *  process's existing mapping of the same file. NULL on failure (errno set). */
void *rdlm_mapping_get(int fd, const struct stat *st, size_t bytes);

/** Drop a reference; the last one unmaps. */
void rdlm_mapping_put(void *base);

#endif
