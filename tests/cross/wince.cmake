# wince.cmake - the Windows CE API guard (toolchains/arm-wince.cmake): links
# gcsnap-agent-min against import libraries of CE's coredll.dll and ws2.dll
# made from the allow-lists in toolchains/wince, and checks the PE file.
set(gs_wince_src ${CMAKE_SOURCE_DIR}/toolchains/wince)
set(gs_wince_lib ${CMAKE_BINARY_DIR}/wince)
set(gs_wince_implibs "")
foreach(dll coredll ws2)
  add_custom_command(OUTPUT ${gs_wince_lib}/lib${dll}.a
    COMMAND ${CMAKE_COMMAND} -E make_directory ${gs_wince_lib}
    COMMAND ${GS_DLLTOOL} -m arm -d ${gs_wince_src}/${dll}.def -l ${gs_wince_lib}/lib${dll}.a
    DEPENDS ${gs_wince_src}/${dll}.def
    COMMENT "Import library of CE's ${dll}.dll")
  list(APPEND gs_wince_implibs ${gs_wince_lib}/lib${dll}.a)
endforeach()
add_custom_target(gs_wince_implibs DEPENDS ${gs_wince_implibs})

# Start-up, C library glue and arithmetic helpers that CE's DLLs do not
# export under the names clang and the mingw-w64 headers use.
target_sources(gcsnap-agent-min PRIVATE ${gs_wince_src}/ce_start.c ${gs_wince_src}/ce_crt.c
                                        ${gs_wince_src}/ce_arith.c)
add_dependencies(gcsnap-agent-min gs_wince_implibs)
target_link_directories(gcsnap-agent-min PRIVATE ${gs_wince_lib})   # -lws2 of gs_common
target_link_libraries(gcsnap-agent-min PRIVATE ${gs_wince_lib}/libcoredll.a)

# lld cannot write the CE subsystem (9): set it after the link.
find_program(GS_PYTHON3 python3)
if(NOT GS_PYTHON3)
  message(FATAL_ERROR "python3 not found: it marks the CE program's subsystem (run toolchains/install-deps.sh)")
endif()
add_custom_command(TARGET gcsnap-agent-min POST_BUILD
  COMMAND ${GS_PYTHON3} ${gs_wince_src}/pe_subsystem.py $<TARGET_FILE:gcsnap-agent-min>
  COMMENT "Marking gcsnap-agent-min as a Windows CE program (subsystem 9)")

add_test(NAME cross_wince_imports
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/wince-imports.sh ${GS_READOBJ}
          $<TARGET_FILE:gcsnap-agent-min> ${gs_wince_src}/coredll.def ${gs_wince_src}/ws2.def)
set_tests_properties(cross_wince_imports PROPERTIES LABELS "cross;wince")

# The guard bites: a call CE lacks (GetTickCount64) does not link.
add_test(NAME cross_wince_guard_fails
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/wince-guard.sh ${CMAKE_C_COMPILER}
          ${CMAKE_C_COMPILER_TARGET} ${GS_MINGW_HEADERS} ${gs_wince_lib}
          ${CMAKE_CURRENT_BINARY_DIR}/work-wince-guard)
set_tests_properties(cross_wince_guard_fails PROPERTIES LABELS "cross;wince")
