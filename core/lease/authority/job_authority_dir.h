/*
 * The data directories of in-job authority replicas (job_authority_dir.c): made empty
 * for a start, removed at stop, and those that replicas of ended processes left behind
 * removed by the next start on the host (rdlm_job_authority_sweep, job_authority.h).
 *
 * A replica's directory holds a marker file (RDLM_JOB_AUTHORITY_DIR_MARK) beside
 * libraft's files and the data directory's lock file (disk.h), so that a sweep never
 * takes a directory it did not make: rdlmd's own data directories have no marker.
 */
#ifndef RDLM_LEASE_JOB_AUTHORITY_DIR_H
#define RDLM_LEASE_JOB_AUTHORITY_DIR_H

#include <rdlm/status.h>

#define RDLM_JOB_AUTHORITY_DIR_MARK "rdlm-job-authority"

/** Make path (0700) with its marker, empty. One that exists must be a directory of
 *  this user (not a link): state left by an earlier run of the same name, emptied so
 *  that the replica never starts from a stale configuration. RDLM_OK or RDLM_ERR_IO
 *  (logged). */
rdlm_status_t rdlm_job_authority_dir_make(const char *path);

/** Remove path and the plain files in it; a failure is logged, not returned. */
void rdlm_job_authority_dir_remove(const char *path);

#endif
