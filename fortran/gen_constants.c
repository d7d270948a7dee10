/*
 * Prints the Fortran declarations of rdlm's named constants (rdlm_constants.inc, included
 * by rdlm.F90): every status of RDLM_STATUS_LIST, the limits and lock orders of rdlm.h
 * and the parameter fields the module sets, so the
 * Fortran module takes them from the C headers instead of a second copy of the list.
 * Run at build time; no arguments.
 */
#include <stdint.h>
#include <stdio.h>

#include <rdlm.h>

#define RDLM_GEN_STATUS_(name, value, text)                                                \
    printf("  !> %s\n  integer(c_int), parameter, public :: %s = %d\n", text, #name, value);

int main(void)
{
    RDLM_STATUS_LIST(RDLM_GEN_STATUS_)
    printf("  !> Longest object name in bytes\n"
           "  integer(c_int), parameter, public :: RDLM_NAME_MAX = %d\n",
           RDLM_NAME_MAX);
    printf("  !> Largest number of permits of a semaphore\n"
           "  integer(c_int32_t), parameter, public :: RDLM_SEM_PERMITS_MAX = %u\n",
           RDLM_SEM_PERMITS_MAX);
    /* UINT64_MAX has the bits of -1 in the signed 64-bit integers Fortran has. */
    printf("  !> Wait without a time limit (the bits of C's UINT64_MAX)\n"
           "  integer(c_int64_t), parameter, public :: RDLM_TIMEOUT_INFINITE = "
           "%lld_c_int64_t\n",
           (long long)(int64_t)RDLM_TIMEOUT_INFINITE);
    printf("  !> Lock orders (rdlm_lock_order_t) for rdlm_lock_open's order\n"
           "  integer(c_int), parameter, public :: RDLM_LOCK_ORDER_DEFAULT = %d\n"
           "  integer(c_int), parameter, public :: RDLM_LOCK_ORDER_BOUNDED = %d\n"
           "  integer(c_int), parameter, public :: RDLM_LOCK_ORDER_FIFO = %d\n",
           RDLM_LOCK_ORDER_DEFAULT, RDLM_LOCK_ORDER_BOUNDED, RDLM_LOCK_ORDER_FIFO);
    /* Fields of the parameter structs the module sets (private: the module's own use). */
    printf("  integer(c_int64_t), parameter :: RDLM_CTX_FIELD_JOB = %u\n"
           "  integer(c_int64_t), parameter :: RDLM_CTX_FIELD_CAPACITY = %u\n",
           RDLM_CTX_FIELD_JOB, RDLM_CTX_FIELD_CAPACITY);
    printf("  integer(c_int64_t), parameter :: RDLM_LOCK_FIELD_ORDER = %u\n",
           RDLM_LOCK_FIELD_ORDER);
    return 0;
}
