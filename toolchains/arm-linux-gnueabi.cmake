# arm-linux-gnueabi.cmake - cross build for ARMv5TE Linux, soft float.
#
# The nearest Debian target to the ARMV4I class of Windows CE devices. Binaries
# run on this machine through qemu-arm with an XScale core (pxa270), which
# ctest prepends to every test command of an executable target.
#
#   cmake -S . -B /tmp/arm -DCMAKE_TOOLCHAIN_FILE=toolchains/arm-linux-gnueabi.cmake \
#         -DGS_HOST=OFF [-DGS_HOST_BIN=/path/to/host/build/bin]
#
# Packages: gcc-arm-linux-gnueabi libc6-dev-armel-cross qemu-user libcmocka-dev:armel.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR arm)

set(GS_CROSS_TRIPLE arm-linux-gnueabi)
set(CMAKE_C_COMPILER ${GS_CROSS_TRIPLE}-gcc)
set(CMAKE_STRIP ${GS_CROSS_TRIPLE}-strip CACHE FILEPATH "strip for the target")
# ARMv5TE, the instruction set of XScale and of the ARMV4I devices' successors.
# Each function and object in a section of its own, and the linker drops
# those nothing uses: the device's flash holds only what the agent calls.
set(CMAKE_C_FLAGS_INIT "-march=armv5te -marm -mfloat-abi=soft -ffunction-sections -fdata-sections")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,--gc-sections")

set(CMAKE_FIND_ROOT_PATH /usr/${GS_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# -L: where qemu finds the ARM dynamic loader and C library.
# LD_LIBRARY_PATH=/lib (the -L folder's lib, through qemu): the C library
# beside that loader. Without it the loader follows the build machine's
# /etc/ld.so.cache to the libc6:armel that libcmocka-dev:armel installs in
# /lib/arm-linux-gnueabi, a different build of glibc than the loader's, and
# every fork() child and new thread then dies of SIGSEGV in the C library.
# Not a cache entry, so that a tree configured before keeps no stale command.
set(CMAKE_CROSSCOMPILING_EMULATOR
    qemu-arm;-cpu;pxa270;-L;/usr/${GS_CROSS_TRIPLE};-E;LD_LIBRARY_PATH=/lib)

# cmocka of the armel architecture (libcmocka-dev:armel), so that the unit
# tests of common/ run under qemu-arm too; its header is the host's.
set(GS_CROSS_UNIT_TESTS ON)
set(GS_CMOCKA_INCLUDE_DIRS /usr/include CACHE PATH "cmocka.h")
set(GS_CMOCKA_LIBRARIES /usr/lib/${GS_CROSS_TRIPLE}/libcmocka.so CACHE FILEPATH "cmocka for the target")

# The stripped device build of the agent (no mock or demo source) must fit
# in 128 KiB (tests/cross, cross_agent_size).
set(GS_CROSS_SIZE_LIMIT 131072 CACHE STRING "size budget of the device build of the agent")
