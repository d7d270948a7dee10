/*
 * RDLM_SHARED marks the few internal functions that librdlm.so exports to the
 * project's own other shared objects (librdlm_mpi.so, librdlm_pmpi.so), so that a
 * process holds one copy of their state (the log threshold, the clock source) instead
 * of one per library. They are declared in no installed header and carry no ABI
 * promise beyond the libraries of one release. Everything else stays hidden.
 */
#ifndef RDLM_SHARED_H
#define RDLM_SHARED_H

#define RDLM_SHARED __attribute__((visibility("default")))

#endif
