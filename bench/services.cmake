# The lock-service baselines of `rdlm-bench -b services` (bench_services.c): each
# adapter is compiled only when its client library is found, with a define per
# baseline; without it the benchmark says what was missing and skips that service.
#
#   RDLM_BENCH_HAVE_REDIS  hiredis          (Debian: libhiredis-dev)       lock_redis.c
#   RDLM_BENCH_HAVE_ETCD   libcurl          (Debian: libcurl4-openssl-dev) lock_etcd.c
#   RDLM_BENCH_HAVE_ZK     zookeeper_mt     (Debian: libzookeeper-mt-dev)  lock_zk.c
#
# What the adapters share (lock_services.c) is always built, and so are rdlm's own
# lease authority's adapter (lock_rdlmd.c, the public API) and `lease-renew`
# (bench_lease.c, renew_wire.c), which speaks the authority's wire protocol through
# the lease client's internal encoders and connection (core/lease cmd.h, wire.h,
# conn.h), exported by librdlm.so as RDLM_SHARED: rdlm-bench links no copy of the
# lease objects, so its rdlm_session_* are librdlm.so's. The servers are not needed to
# build:
# bench/services.sh installs and starts them, and starts rdlmd from this build tree
# (built with rdlm-bench when the authority is).

target_sources(rdlm-bench PRIVATE bench_services.c lock_services.c lock_rdlmd.c
                                  bench_lease.c renew_wire.c)
rdlm_internal_headers(rdlm-bench rdlm_lease rdlm_util)
if(TARGET rdlmd)
  add_dependencies(rdlm-bench rdlmd rdlmctl)
endif()

find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(RDLM_BENCH_HIREDIS QUIET IMPORTED_TARGET hiredis)
  pkg_check_modules(RDLM_BENCH_CURL QUIET IMPORTED_TARGET libcurl)
endif()
find_path(RDLM_BENCH_ZK_INCLUDE_DIR zookeeper/zookeeper.h)
find_library(RDLM_BENCH_ZK_LIBRARY zookeeper_mt)
if(RDLM_BENCH_ZK_INCLUDE_DIR AND RDLM_BENCH_ZK_LIBRARY)
  set(RDLM_BENCH_ZK_FOUND TRUE)
  target_include_directories(rdlm-bench SYSTEM PRIVATE ${RDLM_BENCH_ZK_INCLUDE_DIR})
endif()

# One baseline: when the variable named found is true, its adapter (source) linked
# with the libraries that follow, RDLM_BENCH_HAVE_<define>=1 and its name in the
# status message; else RDLM_BENCH_HAVE_<define>=0.
set(_rdlm_bench_services "")
function(rdlm_bench_service name define found source)
  if(${found})
    target_sources(rdlm-bench PRIVATE ${source})
    target_link_libraries(rdlm-bench PRIVATE ${ARGN})
    target_compile_definitions(rdlm-bench PRIVATE RDLM_BENCH_HAVE_${define}=1)
    set(_rdlm_bench_services ${_rdlm_bench_services} ${name} PARENT_SCOPE)
  else()
    target_compile_definitions(rdlm-bench PRIVATE RDLM_BENCH_HAVE_${define}=0)
  endif()
endfunction()
rdlm_bench_service(redis REDIS RDLM_BENCH_HIREDIS_FOUND lock_redis.c
                   PkgConfig::RDLM_BENCH_HIREDIS)
rdlm_bench_service(etcd ETCD RDLM_BENCH_CURL_FOUND lock_etcd.c PkgConfig::RDLM_BENCH_CURL)
rdlm_bench_service(zookeeper ZK RDLM_BENCH_ZK_FOUND lock_zk.c ${RDLM_BENCH_ZK_LIBRARY})

if(_rdlm_bench_services)
  string(REPLACE ";" ", " _rdlm_bench_services "${_rdlm_bench_services}")
  message(STATUS "rdlm-bench: lock-service baselines: ${_rdlm_bench_services}")
else()
  message(STATUS "rdlm-bench: no lock-service client library found "
                 "(libhiredis-dev, libcurl4-openssl-dev, libzookeeper-mt-dev)")
endif()

if(RDLM_BUILD_TESTS)
  # Without the servers' variables the benchmark skips every service and exits 0.
  add_test(NAME bench.services_without_servers_skips
           COMMAND env -u RDLMBENCH_REDIS -u RDLMBENCH_ETCD -u RDLMBENCH_ZK
                   -u RDLMBENCH_RDLMD
                   sh -c "out=$(\"$1\" -b services) && echo \"$out\" | grep -q 'SKIP: redis'"
                   sh $<TARGET_FILE:rdlm-bench>)
  set_tests_properties(bench.services_without_servers_skips
                       PROPERTIES LABELS bench TIMEOUT 60)
  if(TARGET rdlmd)
    # lease-renew against 3 rdlmd replicas that services.sh starts from this build
    # (no other server): OPEN, RENEW, CLOSE over the wire, the echo floor, and the disk
    # phase, whose renewals must have appended no log entry (target met: "yes").
    add_test(NAME bench.lease_renew_renewal_appends_no_log_entry
             COMMAND env BENCH_SERVICES=rdlmd BENCH_NO_INSTALL=1
                     RDLMBENCH_RDLMD_BIN=$<TARGET_FILE:rdlmd>
                     RDLMBENCH_RDLMCTL_BIN=$<TARGET_FILE:rdlmctl>
                     sh -c "out=$(\"$1\" run -- \"$2\" -b lease-renew -i 200 -x 10 -r 1) && \
                            echo \"$out\" && echo \"$out\" | grep -q 'log entries/op.* yes$'"
                     sh ${CMAKE_CURRENT_SOURCE_DIR}/services.sh $<TARGET_FILE:rdlm-bench>)
    set_tests_properties(bench.lease_renew_renewal_appends_no_log_entry
                         PROPERTIES LABELS bench TIMEOUT 120)
  endif()
endif()
