# launcher.cmake - gs_cross_launcher(VAR TARGET): sets VAR to a program that
# runs TARGET on the build machine, for test scripts that start it themselves
# (ctest puts the emulator only before commands that name a target).
#
# Natively that is the target's file; in a cross build with
# CMAKE_CROSSCOMPILING_EMULATOR (qemu-arm, wine) a generated script
# bin/TARGET-run that starts the target through the emulator, so a script
# still sees one program to run.
function(gs_cross_launcher var target)
  if(NOT (CMAKE_CROSSCOMPILING AND CMAKE_CROSSCOMPILING_EMULATOR))
    set(${var} "$<TARGET_FILE:${target}>" PARENT_SCOPE)
    return()
  endif()
  set(script "${CMAKE_BINARY_DIR}/bin/${target}-run")
  get_property(done GLOBAL PROPERTY GS_CROSS_LAUNCHER_${target})
  if(NOT done)
    set(words "")
    foreach(word IN LISTS CMAKE_CROSSCOMPILING_EMULATOR)
      string(APPEND words "'${word}' ")
    endforeach()
    file(GENERATE OUTPUT "${script}"
      CONTENT "#!/bin/sh\n# Runs ${target} through the emulator of this cross build.\nexec ${words}'$<TARGET_FILE:${target}>' \"$@\"\n"
      FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                       WORLD_READ WORLD_EXECUTE)
    set_property(GLOBAL PROPERTY GS_CROSS_LAUNCHER_${target} 1)
  endif()
  set(${var} "${script}" PARENT_SCOPE)
endfunction()

# The bin folder of a host build (gcsnap, gcsnapd): a cross build has no host
# programs of its own, and its tests check the target's output with these.
set(GS_HOST_BIN "" CACHE PATH "bin folder of a host build, for the tests of a cross build")
