# Installation: librdlm.so (soname = major), librdlm_mpi.so and librdlm_pmpi.so (with
# MPI), librdlm_fortran.so and its rdlm.mod (under include/rdlm/fortran; with
# RDLM_WITH_FORTRAN), the tools, public headers, the rdlm CMake package (rdlm::rdlm,
# component mpi: rdlm::mpi, component fortran: rdlm::fortran), rdlm.pc, rdlm-mpi.pc
# and rdlm-fortran.pc. The prefix is relocatable: installed programs
# and libraries find the project's libraries through a RUNPATH relative to $ORIGIN
# (set in the top CMakeLists.txt), the package files from their own place.
include(CMakePackageConfigHelpers)

install(TARGETS rdlm EXPORT rdlmTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES include/rdlm.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES include/rdlm/status.h include/rdlm/export.h include/rdlm/mpi.h
              include/rdlm/lease.h include/rdlm/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/rdlm)
install(TARGETS rdlm_info RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET rdlm_mpi)
  install(TARGETS rdlm_mpi EXPORT rdlmMpiTargets
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endif()
if(TARGET rdlm_pmpi)
  install(TARGETS rdlm_pmpi LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
if(TARGET rdlm_fortran)
  install(TARGETS rdlm_fortran EXPORT rdlmFortranTargets
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  get_target_property(_rdlm_moddir rdlm_fortran Fortran_MODULE_DIRECTORY)
  install(FILES ${_rdlm_moddir}/rdlm.mod DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/rdlm/fortran)
endif()

set(RDLM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/rdlm)
install(EXPORT rdlmTargets NAMESPACE rdlm:: DESTINATION ${RDLM_CMAKE_DIR})
if(TARGET rdlm_mpi)
  install(EXPORT rdlmMpiTargets NAMESPACE rdlm:: DESTINATION ${RDLM_CMAKE_DIR})
endif()
if(TARGET rdlm_fortran)
  install(EXPORT rdlmFortranTargets NAMESPACE rdlm:: DESTINATION ${RDLM_CMAKE_DIR})
endif()
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
if(TARGET rdlm_mpi)
  configure_file(cmake/rdlm-mpi.pc.in ${PROJECT_BINARY_DIR}/rdlm-mpi.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/rdlm-mpi.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
if(TARGET rdlm_fortran)
  configure_file(cmake/rdlm-fortran.pc.in ${PROJECT_BINARY_DIR}/rdlm-fortran.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/rdlm-fortran.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
