# Sanitizer build types: -DCMAKE_BUILD_TYPE=Asan (AddressSanitizer + UBSan) or Tsan.
set(_rdlm_common "-O1 -g -fno-omit-frame-pointer")
set(CMAKE_C_FLAGS_ASAN "${_rdlm_common} -fsanitize=address,undefined -fno-sanitize-recover=undefined"
    CACHE STRING "C flags for Asan builds" FORCE)
set(CMAKE_EXE_LINKER_FLAGS_ASAN "-fsanitize=address,undefined" CACHE STRING "" FORCE)
set(CMAKE_SHARED_LINKER_FLAGS_ASAN "-fsanitize=address,undefined" CACHE STRING "" FORCE)
# -Wno-tsan: GCC warns that TSan does not model atomic_thread_fence; the shm transport's
# put/get need their fences. TSan runs the unit tests (no transport) in CI.
set(CMAKE_C_FLAGS_TSAN "${_rdlm_common} -fsanitize=thread -Wno-tsan" CACHE STRING "C flags for Tsan builds" FORCE)
set(CMAKE_EXE_LINKER_FLAGS_TSAN "-fsanitize=thread" CACHE STRING "" FORCE)
set(CMAKE_SHARED_LINKER_FLAGS_TSAN "-fsanitize=thread" CACHE STRING "" FORCE)
mark_as_advanced(CMAKE_C_FLAGS_ASAN CMAKE_EXE_LINKER_FLAGS_ASAN CMAKE_SHARED_LINKER_FLAGS_ASAN
                 CMAKE_C_FLAGS_TSAN CMAKE_EXE_LINKER_FLAGS_TSAN CMAKE_SHARED_LINKER_FLAGS_TSAN)
