# The lock-service baselines of `rdlm-bench -b services` (bench_services.c): each
# adapter is compiled only when its client library is found, with a define per
# baseline; without it the benchmark says what was missing and skips that service.
#
#   RDLM_BENCH_HAVE_REDIS  hiredis          (Debian: libhiredis-dev)       lock_redis.c
#   RDLM_BENCH_HAVE_ETCD   libcurl          (Debian: libcurl4-openssl-dev) lock_etcd.c
#   RDLM_BENCH_HAVE_ZK     zookeeper_mt     (Debian: libzookeeper-mt-dev)  lock_zk.c
#
# What the adapters share (lock_services.c) is always built. The servers are not
# needed to build: bench/services.sh installs and starts them.

target_sources(rdlm-bench PRIVATE bench_services.c lock_services.c)

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
                   sh -c "out=$(\"$1\" -b services) && echo \"$out\" | grep -q 'SKIP: redis'"
                   sh $<TARGET_FILE:rdlm-bench>)
  set_tests_properties(bench.services_without_servers_skips
                       PROPERTIES LABELS bench TIMEOUT 60)
endif()
