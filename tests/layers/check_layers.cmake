# The layer check of tests/layers (its CMakeLists.txt says what it proves). Run as
#   cmake -DDATA=<layers_data.cmake> -DCC=<C compiler> -DSRC=<source dir>
#         -DBIN=<build dir> -DWORK=<dir>
#         [-DPLANT=<target>=<dir>] -P check_layers.cmake
# PLANT adds <dir> to <target>'s include directories first (a planted upward
# dependency: the check must then fail and name what the target reaches).
cmake_minimum_required(VERSION 3.25)
include(${DATA})
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(problems 0)
macro(problem msg)
  math(EXPR problems "${problems} + 1")
  message("FAIL: ${msg}")
endmacro()

# The text of a C file that prints <tag>_<k> for each header k of the list headers the
# compiler finds.
function(include_probe headers tag out_var)
  set(probe "")
  set(k 0)
  foreach(h ${headers})
    get_filename_component(b ${h} NAME)
    string(APPEND probe "#if __has_include(\"${b}\")\n${tag}_${k}\n#endif\n")
    math(EXPR k "${k} + 1")
  endforeach()
  set(${out_var} "${probe}" PARENT_SCOPE)
endfunction()

# -nostdinc and the -I flags of those of dirs in the source or build tree: the
# project's own directories only, for the lookups.
function(project_includes dirs out_var)
  set(flags -nostdinc)
  foreach(i ${dirs})
    string(FIND "${i}/" "${SRC}/" at_src)
    string(FIND "${i}/" "${BIN}/" at_bin)
    if(at_src EQUAL 0 OR at_bin EQUAL 0)
      list(APPEND flags -I${i})
    endif()
  endforeach()
  set(${out_var} ${flags} PARENT_SCOPE)
endfunction()

# Which of the headers in the list forbidden t finds with project_flags: each one
# found is a problem, worded with what. own must be found (else the probe did not run).
function(probe_reach t own project_flags forbidden what)
  include_probe("${forbidden}" REACHABLE probe)
  file(WRITE ${WORK}/${t}_reach.c "#if __has_include(\"${own}\")\nOWN_FOUND\n#endif\n${probe}")
  execute_process(COMMAND ${CC} ${project_flags} -E -P ${WORK}/${t}_reach.c
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "OWN_FOUND")
    problem("${t}: the probe did not run or did not find ${own}: ${err}")
  endif()
  string(REGEX MATCHALL "REACHABLE_[0-9]+" hits "${out}")
  foreach(hit ${hits})
    string(REPLACE "REACHABLE_" "" i ${hit})
    list(GET forbidden ${i} h)
    file(RELATIVE_PATH rel ${SRC} ${h})
    problem("${t} reaches ${rel} (${what})")
  endforeach()
  set(problems ${problems} PARENT_SCOPE)
endfunction()

# The spec: target | folder | the layers below it.
set(targets "")
set(folders "")
foreach(entry ${SPEC})
  string(REPLACE "|" ";" f "${entry}")
  list(GET f 0 t)
  list(GET f 1 DIR_${t})
  list(GET f 2 below)
  string(REPLACE "," ";" BELOW_${t} "${below}")
  list(APPEND targets ${t})
  list(APPEND folders ${DIR_${t}})
endforeach()
list(REMOVE_DUPLICATES folders)

# Each folder's interface headers (include/; mpi/, the top, its own *.h) and private
# headers (the rest of the folder, less the folders of other layers inside it).
set(all_headers "")
foreach(d ${folders})
  if(d STREQUAL "mpi")
    file(GLOB pub ${SRC}/${d}/*.h)
  else()
    file(GLOB pub ${SRC}/${d}/include/*.h)
  endif()
  file(GLOB_RECURSE priv ${SRC}/${d}/*.h)
  list(REMOVE_ITEM priv ${pub} "")
  foreach(inner ${folders})
    string(FIND "${inner}" "${d}/" at)
    if(at EQUAL 0)
      foreach(h ${priv})
        string(FIND "${h}" "${SRC}/${inner}/" at)
        if(at EQUAL 0)
          list(REMOVE_ITEM priv ${h})
        endif()
      endforeach()
    endif()
  endforeach()
  if(NOT pub)
    problem("${d} has no interface header (include/)")
  endif()
  set(PUB_${d} ${pub})
  set(PRIV_${d} ${priv})
  list(APPEND all_headers ${pub} ${priv})
endforeach()

# No two headers of the layers share a name: includes are bare names.
set(seen "")
foreach(h ${all_headers})
  get_filename_component(b ${h} NAME)
  if(b IN_LIST seen)
    problem("two headers are called ${b}")
  endif()
  list(APPEND seen ${b})
endforeach()

# Header names the system also has (wait.h): the compiler finds those without any
# project directory, so the one-line proof below does not use them.
include_probe("${all_headers}" SYSTEM probe)
file(WRITE ${WORK}/system.c "${probe}")
execute_process(COMMAND ${CC} -E -P ${WORK}/system.c OUTPUT_VARIABLE out)
string(REGEX MATCHALL "SYSTEM_[0-9]+" hits "${out}")
set(system_named "")
foreach(hit ${hits})
  string(REPLACE "SYSTEM_" "" i ${hit})
  list(GET all_headers ${i} h)
  list(APPEND system_named ${h})
endforeach()

set(n_checked 0)
set(n_layers 0)
foreach(t ${targets})
  if(NOT DEFINED INC_${t})
    continue() # not built in this configuration
  endif()
  math(EXPR n_layers "${n_layers} + 1")
  set(inc ${INC_${t}})
  if(PLANT MATCHES "^${t}=(.*)$")
    list(APPEND inc ${CMAKE_MATCH_1})
  endif()
  set(flags -std=c11)
  foreach(i ${inc})
    list(APPEND flags -I${i})
  endforeach()
  project_includes("${inc}" project_flags)
  foreach(d ${DEFS_${t}})
    list(APPEND flags -D${d})
  endforeach()
  set(mine ${DIR_${t}})
  set(allowed "")
  foreach(b ${BELOW_${t}})
    list(APPEND allowed ${DIR_${b}})
  endforeach()

  # What t must not find: every header of a folder that is neither its own nor below
  # it, and every private header of the folders below it.
  set(forbidden "")
  set(upward "")
  foreach(d ${folders})
    if(d STREQUAL mine)
      continue()
    endif()
    list(APPEND forbidden ${PRIV_${d}})
    if(NOT d IN_LIST allowed)
      list(APPEND forbidden ${PUB_${d}})
      list(APPEND upward ${PUB_${d}})
      list(REMOVE_ITEM upward ${system_named} "")
    endif()
  endforeach()

  # One preprocessor run: __has_include of each, plus one of t's own interface headers,
  # which it must find (so a compiler that cannot look up headers fails the check); in
  # the project's include directories of t only, not the system's.
  list(GET PUB_${mine} 0 own)
  get_filename_component(own ${own} NAME)
  probe_reach(${t} ${own} "${project_flags}" "${forbidden}"
              "a header of a layer above it or beside it, or private")
  list(LENGTH forbidden nf)
  math(EXPR n_checked "${n_checked} + ${nf}")

  # The literal proof: a one-line file including a header of a layer above or beside
  # t must not compile with t's flags.
  if(upward)
    list(GET upward 0 h)
    get_filename_component(b ${h} NAME)
    file(WRITE ${WORK}/${t}_upward.c "#include \"${b}\"\n")
    execute_process(COMMAND ${CC} ${flags} -fsyntax-only ${WORK}/${t}_upward.c
                    OUTPUT_QUIET ERROR_VARIABLE err RESULT_VARIABLE rc)
    if(rc EQUAL 0)
      file(RELATIVE_PATH rel ${SRC} ${h})
      problem("${t}: #include \"${b}\" (${rel}, not a layer below it) compiles")
    endif()
  endif()

  # Every interface header of t and of the layers below it (built here) compiles.
  set(src "")
  foreach(b ${t} ${BELOW_${t}})
    if(DEFINED INC_${b})
      foreach(h ${PUB_${DIR_${b}}})
        get_filename_component(n ${h} NAME)
        string(APPEND src "#include \"${n}\"\n")
      endforeach()
    endif()
  endforeach()
  file(WRITE ${WORK}/${t}_below.c "${src}")
  execute_process(COMMAND ${CC} ${flags} -fsyntax-only ${WORK}/${t}_below.c
                  OUTPUT_QUIET ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    problem("${t}: the interface headers of the layers below it do not compile:\n${err}")
  endif()
endforeach()

# Above the layers: no private header of any layer (they find the public API).
foreach(t ${CONSUMERS})
  math(EXPR n_layers "${n_layers} + 1")
  project_includes("${INC_${t}}" project_flags)
  set(forbidden "")
  foreach(d ${folders})
    list(APPEND forbidden ${PRIV_${d}})
  endforeach()
  probe_reach(${t} rdlm.h "${project_flags}" "${forbidden}" "a layer's private header")
  list(LENGTH forbidden nf)
  math(EXPR n_checked "${n_checked} + ${nf}")
endforeach()

if(problems GREATER 0)
  message(FATAL_ERROR "layer rules broken: ${problems} problem(s)")
endif()
message("layer rules hold: ${n_layers} targets, ${n_checked} unreachable headers "
        "checked, interface headers below each layer compile")
