# arm-wince.cmake - the Windows CE API guard: the device build of the agent
# for ARM Windows, linked only against what CE exports.
#
# Debian has no Windows CE compiler. clang compiles the Win32 backend with
# _WIN32_WCE=0x600 and UNDER_CE against the mingw-w64 headers, for Windows on
# ARM (Thumb-2; CE devices run ARMv4I, whose instruction set the arm tree
# checks instead). lld links it against import libraries that llvm-dlltool
# makes from toolchains/wince/coredll.def and ws2.def, which list only the
# documented exports of CE's coredll.dll and ws2.dll: a call to anything CE
# lacks is an undefined symbol. Nothing runs (no CE emulator here); the test
# cross_wince_imports reads the PE file's machine and imports.
#
#   cmake -S . -B /tmp/wince -DCMAKE_TOOLCHAIN_FILE=toolchains/arm-wince.cmake -DGS_HOST=OFF
#   cmake --build /tmp/wince --target gcsnap-agent-min && (cd /tmp/wince && ctest -L wince)
#
# Packages: clang, lld, llvm (llvm-dlltool, llvm-readobj), and the mingw-w64
# headers of gcc-mingw-w64-x86-64-win32.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_VERSION 6.0)
set(CMAKE_SYSTEM_PROCESSOR arm)

set(CMAKE_C_COMPILER clang)
set(CMAKE_C_COMPILER_TARGET armv7-w64-windows-gnu)
set(CMAKE_AR llvm-ar CACHE FILEPATH "archiver for COFF ARM objects")
set(CMAKE_RANLIB llvm-ranlib CACHE FILEPATH "indexes COFF ARM archives")
# No mingw-w64 runtime for ARM here: compiler checks build a library only.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(GS_MINGW_HEADERS /usr/x86_64-w64-mingw32/include CACHE PATH
    "mingw-w64 headers (the same for every Windows target)")
# __USE_MINGW_ANSI_STDIO=0: printf and friends are CE's, not mingw's own.
set(CMAKE_C_FLAGS_INIT
    "-D_WIN32_WCE=0x600 -DUNDER_CE -D__USE_MINGW_ANSI_STDIO=0 -isystem ${GS_MINGW_HEADERS}")
# No mingw start-up files or libraries: the entry point and the C library
# glue come from toolchains/wince, everything else from the import libraries.
# lld 14 knows no windowsce subsystem; the header says Windows GUI.
set(CMAKE_EXE_LINKER_FLAGS_INIT
    "-fuse-ld=lld -nostdlib -Wl,--entry=WinMainCRTStartup -Wl,--subsystem,windows")
# Not kernel32, user32 and the rest that CMake adds for Windows.
set(CMAKE_C_STANDARD_LIBRARIES "" CACHE STRING "only the CE import libraries")

set(GS_WINCE ON CACHE BOOL "Windows CE API guard (tests/cross/wince.cmake)")
set(GS_WINSOCK_LIB ws2 CACHE STRING "Winsock import library of the Windows target")
set(GS_DLLTOOL llvm-dlltool CACHE FILEPATH "makes import libraries from .def files")
set(GS_READOBJ llvm-readobj CACHE FILEPATH "reads the PE file's headers and imports")

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
