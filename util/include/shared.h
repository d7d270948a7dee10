/*
 * RDLM_SHARED marks the internal functions that librdlm.so exports to the project's
 * own other shared objects (librdlm_mpi.so, librdlm_pmpi.so) and programs (rdlm_info,
 * rdlmctl, rdlm-bench), so that a process holds one copy of their state (the log
 * threshold, the clock source, the transport's backends) instead of one per object:
 * those link librdlm.so and never an object library of a layer. They are declared in
 * no installed header and carry no ABI promise beyond the libraries and programs of
 * one release. Everything else stays hidden. The install test (tests/install) checks
 * both: librdlm.so exports only the public API and the functions declared with
 * RDLM_SHARED at the start of a line (core/, transport/), and no installed program or
 * library that loads librdlm.so defines a function librdlm.so defines.
 */
#ifndef RDLM_SHARED_H
#define RDLM_SHARED_H

#define RDLM_SHARED __attribute__((visibility("default")))

#endif
