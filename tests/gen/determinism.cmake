# determinism.cmake - checks that gcsnap-gen output depends only on its knobs.
#
# Run as: cmake -DGEN=<gcsnap-gen> -DWORK_DIR=<dir> -P determinism.cmake
if(NOT GEN OR NOT WORK_DIR)
  message(FATAL_ERROR "GEN and WORK_DIR must be set")
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

function(gen_run out)
  execute_process(COMMAND "${GEN}" ${ARGN} -o "${WORK_DIR}/${out}"
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gcsnap-gen ${ARGN} failed (${rc}): ${err}")
  endif()
  file(SIZE "${WORK_DIR}/${out}" size)
  if(size LESS 1000)
    message(FATAL_ERROR "gcsnap-gen ${ARGN} wrote only ${size} bytes")
  endif()
endfunction()

function(gen_compare a b expect_same)
  execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files
                          "${WORK_DIR}/${a}" "${WORK_DIR}/${b}"
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  if(expect_same AND NOT rc EQUAL 0)
    message(FATAL_ERROR "${a} and ${b} differ but were made with the same knobs")
  elseif(NOT expect_same AND rc EQUAL 0)
    message(FATAL_ERROR "${a} and ${b} are identical but were made with other knobs")
  endif()
endfunction()

set(knobs --objects 20000 --garbage 12.5 --large 1 --sections 3)
gen_run(a1.gclog ${knobs} --seed 7)
gen_run(a2.gclog ${knobs} --seed 7)
gen_run(b.gclog ${knobs} --seed 8)
gen_run(c.gclog ${knobs} --seed 7 --types 300)
gen_compare(a1.gclog a2.gclog TRUE)
gen_compare(a1.gclog b.gclog FALSE)
gen_compare(a1.gclog c.gclog FALSE)

# Standard output gives the same bytes as -o.
execute_process(COMMAND "${GEN}" ${knobs} --seed 7
                OUTPUT_FILE "${WORK_DIR}/stdout.gclog" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gcsnap-gen to standard output failed (${rc})")
endif()
gen_compare(a1.gclog stdout.gclog TRUE)

# Bad arguments: a message and exit code 2.
foreach(bad "--objects;-5" "--objects;12x" "--types;3" "--garbage;101"
            "--large;abc" "--sections;0" "--seed" "--frobnicate")
  execute_process(COMMAND "${GEN}" ${bad} RESULT_VARIABLE rc
                  OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "gcsnap-gen ${bad}: exit ${rc}, expected 2")
  endif()
  if(NOT err MATCHES "gcsnap-gen: ")
    message(FATAL_ERROR "gcsnap-gen ${bad}: no message on standard error")
  endif()
endforeach()
