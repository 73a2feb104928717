# mingw-w64-x86_64.cmake - cross build for 64-bit Windows with mingw-w64.
#
# Builds the Win32 backend of the port layer (common/src/win) and the agent,
# and runs them on this machine under wine64 in a Wine prefix made once in
# the build folder (<build>/wineprefix), which ctest puts before every test
# command of an executable target.
#
#   cmake -S . -B /tmp/win -DCMAKE_TOOLCHAIN_FILE=toolchains/mingw-w64-x86_64.cmake \
#         -DGS_HOST=OFF [-DGS_HOST_BIN=/path/to/host/build/bin]
#
# Packages: gcc-mingw-w64-x86-64-win32 wine64. Stop Wine afterwards with
# WINEPREFIX=<build>/wineprefix /usr/lib/wine/wineserver -k.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)

set(GS_CROSS_TRIPLE x86_64-w64-mingw32)
set(CMAKE_C_COMPILER ${GS_CROSS_TRIPLE}-gcc)
set(CMAKE_RC_COMPILER ${GS_CROSS_TRIPLE}-windres)
set(CMAKE_STRIP ${GS_CROSS_TRIPLE}-strip CACHE FILEPATH "strip for the target")
# No DLLs of the compiler beside the program: libgcc and winpthreads inside.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")

set(CMAKE_FIND_ROOT_PATH /usr/${GS_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(CMAKE_CROSSCOMPILING_EMULATOR
    sh;${CMAKE_CURRENT_LIST_DIR}/../tests/cross/wine-run.sh;${CMAKE_BINARY_DIR}/wineprefix
    CACHE STRING "runs target binaries on the build machine")

# The unit tests of common/ too. Debian has no cmocka for mingw-w64, so
# they are built against tests/unit/gs_cmocka_lite.h.
set(GS_CROSS_UNIT_TESTS ON)
