# Installation: librdlm.so (soname = major), public headers, rdlm::rdlm CMake
# package and rdlm.pc.
include(CMakePackageConfigHelpers)

install(TARGETS rdlm EXPORT rdlmTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES include/rdlm.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES include/rdlm/status.h include/rdlm/export.h include/rdlm/mpi.h
              include/rdlm/lease.h
              ${PROJECT_BINARY_DIR}/include/rdlm/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/rdlm)
install(TARGETS rdlm_info RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

set(RDLM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/rdlm)
install(EXPORT rdlmTargets NAMESPACE rdlm:: DESTINATION ${RDLM_CMAKE_DIR})
configure_package_config_file(cmake/rdlmConfig.cmake.in
  ${PROJECT_BINARY_DIR}/rdlmConfig.cmake INSTALL_DESTINATION ${RDLM_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/rdlmConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/rdlmConfig.cmake
              ${PROJECT_BINARY_DIR}/rdlmConfigVersion.cmake
        DESTINATION ${RDLM_CMAKE_DIR})

# Relocatable: the prefix is found from the .pc file's own place (${pcfiledir}).
file(RELATIVE_PATH RDLM_PC_TO_PREFIX
     /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(cmake/rdlm.pc.in ${PROJECT_BINARY_DIR}/rdlm.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/rdlm.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
