# Runs runtime-corpus programs with the native tier on (docs/native-tier.md, "Identity"), one after the other, each as
# run-program.cmake runs it (the PASS line, the expected output), and checks that the tier ran compiled code:
#
#   cmake -DLIST=<native-corpus.txt> [-DPROGRAMS=<name,name...>] -DSTATS=<file> -DRUN_PROGRAM=<run-program.cmake>
#         [-DMIN_KERNELS=1] [-DMIN_LAUNCHES=1] [-DCACHE_DIR=<folder> [-DMIN_PREPARED_LOADS=1] [-DWARM=1]]
#         -P run-native.cmake
#
# CACHE_DIR: the programs share this on-disk cache (CUEMU_NATIVE_CACHE_PATH), emptied first: the first compiling
# process prepares the handler bitcode and writes it there, the later ones read it (at least MIN_PREPARED_LOADS of
# them must), and a kernel two programs hold compiles once. Without it the test's environment decides.
# WARM: then every program runs again on that cache, and each of those processes must load every kernel it runs
# compiled from the cache without the compiler's library (no LLVM in the process: docs/native-tier.md, Cache).
#
# LIST: one program a line, `program|binary|expect|expect_cuemu|VAR=value VAR=value` (CMakeLists.txt writes it);
# PROGRAMS: the programs to run, separated by commas (default: every one). The tier's variables come from the test's environment. Each
# process appends its nativeTierStats() to STATS at exit (CUEMU_NATIVE_STATS, ptx-interp/src/native/tier.cpp); the
# run fails unless the programs together compiled at least MIN_KERNELS kernels and ran at least MIN_LAUNCHES launches
# of compiled code: a run whose programs all stayed interpreted could not fail on a difference of the tier.
cmake_minimum_required(VERSION 3.20)  # lists keep their empty fields
if(NOT DEFINED MIN_KERNELS)
  set(MIN_KERNELS 1)
endif()
if(NOT DEFINED MIN_LAUNCHES)
  set(MIN_LAUNCHES 1)
endif()
file(REMOVE ${STATS})
set(cache_env "")
if(DEFINED CACHE_DIR)
  file(REMOVE_RECURSE ${CACHE_DIR})
  set(cache_env CUEMU_NATIVE_CACHE_DISABLE=0 CUEMU_NATIVE_CACHE_PATH=${CACHE_DIR})
  if(NOT DEFINED MIN_PREPARED_LOADS)
    set(MIN_PREPARED_LOADS 1)
  endif()
else()
  set(MIN_PREPARED_LOADS 0)
endif()
if(DEFINED PROGRAMS)
  string(REPLACE "," ";" PROGRAMS "${PROGRAMS}")
endif()
file(STRINGS ${LIST} lines)
set(failed "")
set(ran 0)
# Runs the programs, each process appending its statistics to `stats`.
function(run_programs stats pass)
  foreach(line IN LISTS lines)
    string(REPLACE "|" ";" fields "${line}")
    list(GET fields 0 program)
    list(GET fields 1 binary)
    list(GET fields 2 expect)
    list(GET fields 3 expect_cuemu)
    list(GET fields 4 env)
    if(DEFINED PROGRAMS AND NOT PROGRAMS STREQUAL "" AND NOT program IN_LIST PROGRAMS)
      continue()
    endif()
    separate_arguments(env UNIX_COMMAND "${env}")
    string(TIMESTAMP start "%s%f")
    execute_process(
      COMMAND ${CMAKE_COMMAND} -E env CUEMU_NATIVE_STATS=${stats} ${cache_env} ${env} ${CMAKE_COMMAND}
              -DPROGRAM=${binary} "-DEXPECT=${expect}" "-DEXPECT_CUEMU=${expect_cuemu}" -P ${RUN_PROGRAM}
      RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
    string(TIMESTAMP end "%s%f")
    math(EXPR ms "(${end} - ${start}) / 1000")
    math(EXPR ran "${ran} + 1")
    if(NOT rc EQUAL 0)
      message("${out}")
      message("runtime-native${pass}: ${program} FAILED (${ms} ms)")
      list(APPEND failed ${program})
    elseif(out MATCHES "CORPUS-SKIPPED")
      message("runtime-native${pass}: ${program} skipped (${ms} ms)")
    else()
      message("runtime-native${pass}: ${program} passed (${ms} ms)")
    endif()
  endforeach()
  set(failed "${failed}" PARENT_SCOPE)
  set(ran ${ran} PARENT_SCOPE)
endfunction()
run_programs(${STATS} "")

# the programs' statistics together
set(totals kernels_compiled kernels_refused launches_compiled launches_interpreted background_compiles ops_inlined
           ops_called cache_loads prepared_loads prepared_writes cache_loads_without_compiler compiler_loaded)
# The statistics lines of `stats` summed: sum_<key> for each key of `totals`, and `processes`.
function(sum_stats stats)
  foreach(key IN LISTS totals)
    set(sum_${key} 0)
  endforeach()
  set(processes 0)
  if(EXISTS ${stats})
    file(STRINGS ${stats} stats_lines)
    foreach(stats_line IN LISTS stats_lines)
      math(EXPR processes "${processes} + 1")
      foreach(key IN LISTS totals)
        if(stats_line MATCHES "(^| )${key}=([0-9]+)")
          math(EXPR sum_${key} "${sum_${key}} + ${CMAKE_MATCH_2}")
        endif()
      endforeach()
    endforeach()
  endif()
  foreach(key IN LISTS totals)
    set(sum_${key} ${sum_${key}} PARENT_SCOPE)
  endforeach()
  set(processes ${processes} PARENT_SCOPE)
endfunction()
sum_stats(${STATS})
set(summary "")
foreach(key IN LISTS totals)
  string(APPEND summary " ${key}=${sum_${key}}")
endforeach()
message("runtime-native: ${ran} programs, ${processes} processes with the tier on:${summary}")
if(failed)
  message(FATAL_ERROR "runtime-native: failed: ${failed}")
endif()
if(sum_kernels_compiled LESS MIN_KERNELS OR sum_launches_compiled LESS MIN_LAUNCHES)
  message(FATAL_ERROR "runtime-native: the tier compiled ${sum_kernels_compiled} kernels and ran "
                      "${sum_launches_compiled} compiled launches, fewer than ${MIN_KERNELS} and ${MIN_LAUNCHES}: "
                      "this run did not test the tier")
endif()
if(sum_prepared_loads LESS MIN_PREPARED_LOADS)
  message(FATAL_ERROR "runtime-native: ${sum_prepared_loads} processes read the prepared handler bitcode from "
                      "${CACHE_DIR}, fewer than ${MIN_PREPARED_LOADS}")
endif()

if(WARM)
  set(warm_stats ${STATS}.warm)
  file(REMOVE ${warm_stats})
  run_programs(${warm_stats} " (warm)")
  if(failed)
    message(FATAL_ERROR "runtime-native (warm): failed: ${failed}")
  endif()
  sum_stats(${warm_stats})
  set(warm_kernels ${sum_kernels_compiled})
  set(warm_loaded ${sum_cache_loads_without_compiler})
  set(with_compiler ${sum_compiler_loaded})  # (0 or 1 a process)
  message("runtime-native (warm): ${warm_kernels} kernels, ${warm_loaded} loaded without the compiler, "
          "${with_compiler} processes loaded it")
  if(warm_kernels EQUAL 0 OR NOT warm_loaded EQUAL warm_kernels OR with_compiler GREATER 0)
    message(FATAL_ERROR "runtime-native (warm): every kernel must load from the cache without the compiler "
                        "(each process's statistics: ${warm_stats})")
  endif()
endif()
