/** @file
 * The version of the rdlm headers, for compile-time checks (rdlm_get_version gives
 * the library's at run time). The one place the version is written: CMakeLists.txt
 * reads its three numbers from here. */
#ifndef RDLM_VERSION_H
#define RDLM_VERSION_H
/** Major version: a change breaks the API or ABI (the soname). */
#define RDLM_VERSION_MAJOR 0
/** Minor version: additions. */
#define RDLM_VERSION_MINOR 1
/** Patch version: fixes. */
#define RDLM_VERSION_PATCH 0
/** @cond internal: stringify a number macro's value. */
#define RDLM_VERSION_STR_(x) #x
#define RDLM_VERSION_XSTR_(x) RDLM_VERSION_STR_(x)
/** @endcond */
/** "major.minor.patch", as rdlm_get_version() returns it. */
#define RDLM_VERSION_STRING                                                              \
    RDLM_VERSION_XSTR_(RDLM_VERSION_MAJOR)                                               \
    "." RDLM_VERSION_XSTR_(RDLM_VERSION_MINOR) "." RDLM_VERSION_XSTR_(RDLM_VERSION_PATCH)
/** Compare with RDLM_VERSION_NUMBER >= RDLM_VERSION_ENCODE(0, 2, 0). */
#define RDLM_VERSION_ENCODE(major, minor, patch) (((major) << 16) | ((minor) << 8) | (patch))
/** This version encoded as RDLM_VERSION_ENCODE does. */
#define RDLM_VERSION_NUMBER                                                              \
    RDLM_VERSION_ENCODE(RDLM_VERSION_MAJOR, RDLM_VERSION_MINOR, RDLM_VERSION_PATCH)
#endif
