/*
 * A fenced resource for the examples: a file whose first 8 bytes hold the highest
 * token accepted so far, followed by one text record per accepted write. A write is
 * accepted only if rdlm_fence_check passes its token against that header, so a holder
 * that lost the lock (paused, then woke up) cannot write with its old token.
 *
 * The check and the write are one step of the resource: each write holds the file's
 * own lock (flock, exclusive) from reading the header to appending its record. The
 * rdlm lock cannot serialise them: a holder paused between its check and its write
 * no longer holds it when it resumes, and its write would land after a newer
 * holder's, with the header rolled back. A writer stopped inside that step holds up
 * the others' writes (not their lock acquires) until it continues or dies. Each
 * writer opens the file itself (flock is per open file, not per descriptor copy).
 */
#ifndef RDLM_EXAMPLE_FENCED_FILE_H
#define RDLM_EXAMPLE_FENCED_FILE_H

#include <stdint.h>

#include <rdlm.h>

/** Create (truncate) path with an empty header. 0 or -1 (perror printed). */
int fenced_file_create(const char *path);

/** Append "token writer\n" if token passes the check, under the file's lock. RDLM_OK,
 *  RDLM_ERR_STALE_TOKEN (rejected, nothing written), or RDLM_ERR_IO. Blocking (the
 *  file's lock). */
rdlm_status_t fenced_file_write(int fd, uint64_t token, int writer);

/** Records in the file and whether their tokens strictly increase; -1 on error. */
long fenced_file_check(const char *path, int *increasing_p);

#endif
