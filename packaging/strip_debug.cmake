# CPack pre-build script (packaging/install.cmake): removes the debug information from the package's ELF files and
# keeps their symbol tables. The native tier reads the interpreter's symbol table (libcuda.so.1's) to bind compiled
# kernels to the interpreter's own functions (docs/native-tier.md); a fully stripped library left it without one,
# and every kernel stayed interpreted. The symbols cost about 2 MB of the library's 17.
# Links are not followed: the package's toolkit layout links to the CUDA toolkit's folders (ptx-toolkit/nvvm,
# toolkit/bin), and following them stripped NVIDIA's own cicc in place (seen as "Text file busy" while a build ran
# it). Only files whose real path lies inside the staging folder are stripped.
cmake_policy(SET CMP0009 NEW)
file(REAL_PATH "${CPACK_TEMPORARY_INSTALL_DIRECTORY}" staging)
file(GLOB_RECURSE files LIST_DIRECTORIES false "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/*")
foreach(f IN LISTS files)
  if(IS_SYMLINK "${f}")
    continue()
  endif()
  file(REAL_PATH "${f}" real)
  string(FIND "${real}" "${staging}/" inside)
  if(NOT inside EQUAL 0)
    continue()
  endif()
  file(READ "${f}" magic LIMIT 4 HEX)
  if(magic STREQUAL "7f454c46")
    execute_process(COMMAND "${CPACK_CUEMU_STRIP}" --strip-debug "${f}" RESULT_VARIABLE rc ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "strip --strip-debug ${f} failed: ${err}")
    endif()
  endif()
endforeach()
