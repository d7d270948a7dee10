# The layers of the library as CMake targets (docs/architecture.md, "Layers"). Each
# layer is one folder and one or two targets. A layer's folder holds its sources and
# its private headers; its include/ subfolder holds the headers the layers above it may
# include (its interface). A layer's target takes include/ as a PUBLIC include directory
# and the folder itself as a PRIVATE one, and links only the layers below it, so a
# #include of a higher layer's header, or of any other layer's private header, does not
# compile: the compiler cannot find it (tests/layers checks every pair).
set(RDLM_PUBLIC_INCLUDES
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)

# rdlm_layer(<name> <OBJECT|STATIC> <dir> <source>...): the target of a layer whose
# folder is <dir> (relative to the current source directory), compiled with hidden
# visibility (librdlm.so exports RDLM_EXPORT and RDLM_SHARED symbols only). Link it to
# the layers below with target_link_libraries(<name> PUBLIC ...).
function(rdlm_layer name kind dir)
  get_filename_component(_dir ${dir} ABSOLUTE)
  add_library(${name} ${kind} ${ARGN})
  target_include_directories(${name} PUBLIC $<BUILD_INTERFACE:${_dir}/include>
                                            ${RDLM_PUBLIC_INCLUDES}
                                     PRIVATE ${_dir})
  target_link_libraries(${name} PRIVATE rdlm_build_flags)
  target_compile_definitions(${name} PRIVATE RDLM_BUILDING_LIBRARY _GNU_SOURCE)
  set_target_properties(${name} PROPERTIES C_VISIBILITY_PRESET hidden)
endfunction()

# rdlm_internal_headers(target layer...): the interface headers of the named layers (and
# of the layers below them), for a program or library of this project that links
# librdlm.so and calls those layers only through the functions librdlm.so exports with
# RDLM_SHARED (util/include/shared.h): their headers, never a copy of their objects, so
# a process holds one copy of each layer's state. tests/install checks the binaries.
function(rdlm_internal_headers target)
  foreach(_layer ${ARGN})
    target_include_directories(${target} PRIVATE
                               $<TARGET_PROPERTY:${_layer},INTERFACE_INCLUDE_DIRECTORIES>)
  endforeach()
endfunction()

# rdlm_white_box(target layer...): a test of a layer also sees the layer's private
# headers (the include directories the layer is compiled with). For tests/ only.
function(rdlm_white_box target)
  foreach(_layer ${ARGN})
    target_include_directories(${target} PRIVATE
                               $<TARGET_PROPERTY:${_layer},INCLUDE_DIRECTORIES>)
  endforeach()
endfunction()
