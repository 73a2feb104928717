# arm-mingw32ce.cmake - cross build for Windows CE on ARM with cegcc.
#
# For a machine with the cegcc toolchain (arm-mingw32ce-gcc, from the cegcc
# project; not packaged by Debian and not run by the tests here). It builds
# the Win32 backend of the port layer with UNDER_CE defined, against the CE
# headers and libraries cegcc ships (coredll, ws2).
#
#   cmake -S . -B /tmp/ce -DCMAKE_TOOLCHAIN_FILE=toolchains/arm-mingw32ce.cmake \
#         -DGS_HOST=OFF [-DGS_CEGCC_ROOT=/opt/mingw32ce]
#
# Copy bin/gcsnap-agent.exe (and bin/gcsnap-agent-min.exe, the build without
# the mock and demo sources) to the device; there is no emulator here, so
# ctest cannot run its tests.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_VERSION 6.0)
set(CMAKE_SYSTEM_PROCESSOR arm)

set(GS_CEGCC_ROOT /opt/mingw32ce CACHE PATH "where cegcc is installed")
set(GS_CROSS_TRIPLE arm-mingw32ce)
set(CMAKE_C_COMPILER ${GS_CEGCC_ROOT}/bin/${GS_CROSS_TRIPLE}-gcc)
set(CMAKE_RC_COMPILER ${GS_CEGCC_ROOT}/bin/${GS_CROSS_TRIPLE}-windres)
set(CMAKE_STRIP ${GS_CEGCC_ROOT}/bin/${GS_CROSS_TRIPLE}-strip CACHE FILEPATH "strip for the target")
# Windows CE 6.0, and the ARMV4I instruction set of its devices.
set(CMAKE_C_FLAGS_INIT "-D_WIN32_WCE=0x600 -DUNDER_CE -march=armv4t -mthumb-interwork")
set(CMAKE_C_STANDARD_LIBRARIES "-lcoredll" CACHE STRING "CE system libraries")
set(GS_WINSOCK_LIB ws2 CACHE STRING "Winsock import library of the Windows target")

set(CMAKE_FIND_ROOT_PATH ${GS_CEGCC_ROOT}/${GS_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
