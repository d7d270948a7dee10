/*
 * A fenced resource for the examples: a file whose first 8 bytes hold the highest
 * token accepted so far, followed by one text record per accepted write. A write is
 * accepted only if rdlm_fence_check passes its token against that header, so a holder
 * that lost the lock (paused, then woke up) cannot write with its old token.
 */
#ifndef RDLM_EXAMPLE_FENCED_FILE_H
#define RDLM_EXAMPLE_FENCED_FILE_H

#include <stdint.h>

#include <rdlm.h>

/** Create (truncate) path with an empty header. 0 or -1 (perror printed). */
int fenced_file_create(const char *path);

/** Append "token writer\n" if token passes the check. RDLM_OK,
 *  RDLM_ERR_STALE_TOKEN (rejected, nothing written), or RDLM_ERR_IO. The caller
 *  serialises writers (it holds the lock, or the write is rejected anyway). */
rdlm_status_t fenced_file_write(int fd, uint64_t token, int writer);

/** Records in the file and whether their tokens strictly increase; -1 on error. */
long fenced_file_check(const char *path, int *increasing_p);

#endif
