/** @file
 * Symbol visibility: the library is built with -fvisibility=hidden and exports
 * exactly the functions marked RDLM_EXPORT. */
#ifndef RDLM_EXPORT_H
#define RDLM_EXPORT_H
#if defined(RDLM_BUILDING_LIBRARY)
#define RDLM_EXPORT __attribute__((visibility("default")))
#else
#define RDLM_EXPORT
#endif
#endif
