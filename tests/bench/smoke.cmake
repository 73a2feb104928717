# smoke.cmake - a small run of gcsnap-bench over a mock heap dump.
#
# Checks that every phase runs and prints its figures, that the dump
# validates with no error and no warning, and that exactly the garbage the
# mock source built is unreachable.
# Run as: cmake -DAGENT=<gcsnap-agent> -DBENCH=<gcsnap-bench> -DWORK_DIR=<dir> -P smoke.cmake
if(NOT AGENT OR NOT BENCH OR NOT WORK_DIR)
  message(FATAL_ERROR "AGENT, BENCH and WORK_DIR must be set")
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(dump "${WORK_DIR}/smoke.gclog")

# 20000 objects in chunks of 1024 whose last round(1024 * 10%) = 102 are
# garbage: 19 full chunks, and the last 544 objects are all live.
set(objects 20000)
set(garbage 1938)
execute_process(COMMAND "${AGENT}"
                        --source mock:objects=${objects},garbage=10,large=0.5,seed=3
                        --out "${dump}"
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gcsnap-agent failed (${rc}): ${err}")
endif()

function(bench_phase phase outvar)
  execute_process(COMMAND "${BENCH}" ${phase} "${dump}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gcsnap-bench ${phase} failed (${rc}): ${out}${err}")
  endif()
  foreach(key bytes seconds mb_per_s maxrss_kb)
    if(NOT out MATCHES "${key}=[0-9]")
      message(FATAL_ERROR "gcsnap-bench ${phase}: no ${key} in: ${out}")
    endif()
  endforeach()
  set(${outvar} "${out}" PARENT_SCOPE)
endfunction()

function(bench_field text key outvar)
  if(NOT text MATCHES "${key}=([0-9]+)")
    message(FATAL_ERROR "no ${key} in: ${text}")
  endif()
  set(${outvar} "${CMAKE_MATCH_1}" PARENT_SCOPE)
endfunction()

bench_phase(read out)
bench_field("${out}" malformed bad)
if(NOT bad EQUAL 0)
  message(FATAL_ERROR "the reader found ${bad} malformed lines: ${out}")
endif()

bench_phase(validate out)
bench_field("${out}" errors errors)
bench_field("${out}" warnings warnings)
if(NOT errors EQUAL 0 OR NOT warnings EQUAL 0)
  message(FATAL_ERROR "mock dump is not clean: ${out}")
endif()

bench_phase(graph out)
bench_field("${out}" objects n)
bench_field("${out}" nodes nodes)
bench_field("${out}" reachable reachable)
bench_field("${out}" memory memory)
if(NOT n EQUAL objects OR NOT nodes EQUAL objects)
  message(FATAL_ERROR "expected ${objects} objects and no placeholder nodes: ${out}")
endif()
math(EXPR expect "${objects} - ${garbage}")
if(NOT reachable EQUAL expect)
  message(FATAL_ERROR "expected ${expect} reachable objects: ${out}")
endif()
if(memory LESS 1)
  message(FATAL_ERROR "graph memory not reported: ${out}")
endif()
