# The lock-service baselines of `rdlm-bench -b services` (bench_services.c): each
# adapter is compiled only when its client library is found, with a define per
# baseline; without it the benchmark says what was missing and skips that service.
#
#   RDLM_BENCH_HAVE_REDIS  hiredis          (Debian: libhiredis-dev)       lock_redis.c
#   RDLM_BENCH_HAVE_ETCD   libcurl          (Debian: libcurl4-openssl-dev) lock_etcd.c
#   RDLM_BENCH_HAVE_ZK     zookeeper_mt     (Debian: libzookeeper-mt-dev)  lock_zk.c
#
# The servers are not needed to build: bench/services.sh installs and starts them.

target_sources(rdlm-bench PRIVATE bench_services.c)

find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(RDLM_BENCH_HIREDIS QUIET IMPORTED_TARGET hiredis)
  pkg_check_modules(RDLM_BENCH_CURL QUIET IMPORTED_TARGET libcurl)
endif()
find_path(RDLM_BENCH_ZK_INCLUDE_DIR zookeeper/zookeeper.h)
find_library(RDLM_BENCH_ZK_LIBRARY zookeeper_mt)

set(_rdlm_bench_services "")
if(RDLM_BENCH_HIREDIS_FOUND)
  target_sources(rdlm-bench PRIVATE lock_redis.c)
  target_link_libraries(rdlm-bench PRIVATE PkgConfig::RDLM_BENCH_HIREDIS)
  target_compile_definitions(rdlm-bench PRIVATE RDLM_BENCH_HAVE_REDIS=1)
  list(APPEND _rdlm_bench_services redis)
else()
  target_compile_definitions(rdlm-bench PRIVATE RDLM_BENCH_HAVE_REDIS=0)
endif()
if(RDLM_BENCH_CURL_FOUND)
  target_sources(rdlm-bench PRIVATE lock_etcd.c)
  target_link_libraries(rdlm-bench PRIVATE PkgConfig::RDLM_BENCH_CURL)
  target_compile_definitions(rdlm-bench PRIVATE RDLM_BENCH_HAVE_ETCD=1)
  list(APPEND _rdlm_bench_services etcd)
else()
  target_compile_definitions(rdlm-bench PRIVATE RDLM_BENCH_HAVE_ETCD=0)
endif()
if(RDLM_BENCH_ZK_INCLUDE_DIR AND RDLM_BENCH_ZK_LIBRARY)
  target_sources(rdlm-bench PRIVATE lock_zk.c)
  target_include_directories(rdlm-bench SYSTEM PRIVATE ${RDLM_BENCH_ZK_INCLUDE_DIR})
  target_link_libraries(rdlm-bench PRIVATE ${RDLM_BENCH_ZK_LIBRARY})
  target_compile_definitions(rdlm-bench PRIVATE RDLM_BENCH_HAVE_ZK=1)
  list(APPEND _rdlm_bench_services zookeeper)
else()
  target_compile_definitions(rdlm-bench PRIVATE RDLM_BENCH_HAVE_ZK=0)
endif()
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
