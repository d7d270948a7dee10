# Every external dependency is found here, once, in the top-level scope.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)

set(RDLM_HAVE_HWLOC 0)
if(RDLM_WITH_HWLOC)
  pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc)
  set(RDLM_HAVE_HWLOC 1)
endif()

if(RDLM_WITH_VERBS)
  pkg_check_modules(IBVERBS REQUIRED IMPORTED_TARGET libibverbs)
  pkg_check_modules(RDMACM REQUIRED IMPORTED_TARGET librdmacm)
endif()

# UCX 1.13's config has no if(NOT TARGET) guard: find it exactly once, here.
if(RDLM_WITH_UCX)
  find_package(UCX REQUIRED CONFIG)
endif()

if(RDLM_WITH_MPI OR RDLM_WITH_PMPI)
  find_package(MPI REQUIRED COMPONENTS C)
  # The launcher's flavour decides the tests' mpiexec flags. Open MPI's refuses root
  # and more ranks than cores without the two below and hands a variable to the ranks
  # with -x VAR=value; MPICH's hydra needs neither and uses -genv VAR value. Build
  # against MPICH with -DMPI_C_COMPILER=mpicc.mpich -DMPIEXEC_EXECUTABLE=mpiexec.mpich.
  execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _rdlm_mpiexec_v
                  ERROR_VARIABLE _rdlm_mpiexec_v TIMEOUT 30)
  # The tests restrict rdlm's UCX transports with RDLM_UCX_TLS under MPICH: its ch4:ucx
  # device reads UCX_TLS too, and with tcp,self a plain MPICH 4.0 hello world hangs in
  # MPI_Finalize in about half the runs here.
  if(_rdlm_mpiexec_v MATCHES "HYDRA")
    set(RDLM_MPI_FLAVOR mpich)
    set(RDLM_MPIEXEC_FLAGS "")
    set(RDLM_TEST_UCX_TLS RDLM_UCX_TLS)
  else()
    set(RDLM_MPI_FLAVOR openmpi)
    set(RDLM_MPIEXEC_FLAGS --oversubscribe --allow-run-as-root)
    set(RDLM_TEST_UCX_TLS UCX_TLS)
  endif()
  message(STATUS "MPI: ${RDLM_MPI_FLAVOR} (${MPIEXEC_EXECUTABLE})")
endif()

# rdlm_mpiexec_env(<out> VAR=value...): the mpiexec flags that give every rank
# VAR=value, in the found launcher's syntax.
function(rdlm_mpiexec_env out)
  set(_flags)
  foreach(_kv ${ARGN})
    if(RDLM_MPI_FLAVOR STREQUAL "mpich")
      string(FIND "${_kv}" "=" _eq)
      string(SUBSTRING "${_kv}" 0 ${_eq} _k)
      math(EXPR _eq "${_eq} + 1")
      string(SUBSTRING "${_kv}" ${_eq} -1 _v)
      list(APPEND _flags -genv ${_k} ${_v})
    else()
      list(APPEND _flags -x ${_kv})
    endif()
  endforeach()
  set(${out} ${_flags} PARENT_SCOPE)
endfunction()

if(RDLM_BUILD_TESTS)
  # cmocka 1.1.5 sets CMOCKA_INCLUDE_DIR / CMOCKA_LIBRARIES only.
  find_package(cmocka REQUIRED CONFIG)
endif()

# The lease authority (core/lease, rdlmd): libraft 0.15 with its libuv I/O.
# MUNGE (session authentication in service mode) is used when libmunge-dev is found.
set(RDLM_HAVE_MUNGE 0)
if(RDLM_WITH_AUTHORITY)
  pkg_check_modules(RAFT REQUIRED IMPORTED_TARGET raft)
  pkg_check_modules(LIBUV REQUIRED IMPORTED_TARGET libuv)
endif()
pkg_check_modules(MUNGE QUIET IMPORTED_TARGET munge)
if(MUNGE_FOUND)
  set(RDLM_HAVE_MUNGE 1)
endif()

# PMIx (libpmix-dev): rank and size of the standalone rendezvous under a PMIx server
# (util/launch_pmix.c); used when found unless RDLM_WITH_PMIX=OFF.
set(RDLM_HAVE_PMIX 0)
if(RDLM_WITH_PMIX)
  pkg_check_modules(PMIX QUIET IMPORTED_TARGET pmix)
  if(PMIX_FOUND)
    set(RDLM_HAVE_PMIX 1)
    # Debian's pmix.pc adds -Wl,-rpath to its private directory, which would put an
    # absolute path into every installed program's RUNPATH; the loader finds libpmix
    # through ldconfig without it (and the build tree through CMake's build RPATH).
    set_property(TARGET PkgConfig::PMIX PROPERTY INTERFACE_LINK_OPTIONS "")
  endif()
endif()
