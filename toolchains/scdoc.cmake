# scdoc.cmake - manual pages written in scdoc, built beside their program.
#
#   gs_man(COMPONENT page.N.scd ...)
# turns each source into page.N.gz (scdoc, then gzip -9n as Debian wants)
# as part of the default build, and installs it into share/man/manN in the
# package COMPONENT. Without scdoc the pages are left out, with a notice.

find_program(GS_SCDOC scdoc)
find_program(GS_GZIP gzip)
if(NOT GS_SCDOC OR NOT GS_GZIP)
  message(STATUS "scdoc or gzip not found: the manual pages are not built")
endif()

function(gs_man component)
  if(NOT GS_SCDOC OR NOT GS_GZIP)
    return()
  endif()
  set(outs)
  foreach(src IN LISTS ARGN)
    string(REGEX REPLACE "\\.scd$" "" page "${src}")
    string(REGEX MATCH "[0-9]$" section "${page}")
    set(out "${CMAKE_CURRENT_BINARY_DIR}/${page}.gz")
    add_custom_command(OUTPUT "${out}"
      COMMAND sh -c "\"$1\" < \"$2\" | \"$3\" -9n > \"$4\"" sh "${GS_SCDOC}"
              "${CMAKE_CURRENT_SOURCE_DIR}/${src}" "${GS_GZIP}" "${out}"
      DEPENDS "${src}" VERBATIM)
    install(FILES "${out}" DESTINATION share/man/man${section} COMPONENT ${component})
    list(APPEND outs "${out}")
  endforeach()
  add_custom_target(man-${component} ALL DEPENDS ${outs})
endfunction()
