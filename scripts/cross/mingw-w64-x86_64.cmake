# CMake toolchain file: Windows x64 with Debian's MinGW-w64 cross toolchain
# (the -posix compilers, as the Meson cross file mingw-w64-x86_64.txt here).
# For a CMake project consuming a cross-installed dagrt package
# (docs/windows.md, "A CMake project cross-built for Windows"):
#
#   cmake -S . -B b -DCMAKE_TOOLCHAIN_FILE=scripts/cross/mingw-w64-x86_64.cmake \
#       -DCMAKE_PREFIX_PATH=STAGE/usr/local -DDAGC_EXECUTABLE=/usr/local/bin/dagc
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CMAKE_C_COMPILER x86_64-w64-mingw32-gcc-posix)
set(CMAKE_CXX_COMPILER x86_64-w64-mingw32-g++-posix)
set(CMAKE_RC_COMPILER x86_64-w64-mingw32-windres)
set(CMAKE_FIND_ROOT_PATH /usr/x86_64-w64-mingw32)
# Programs run on the build machine (a host dagc, dot); libraries and
# headers come from the target's root; packages from there or from
# CMAKE_PREFIX_PATH (a staged cross install of dagrt).
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# Static libgcc, libstdc++ and winpthreads, as in the Meson cross file:
# the programs run under Wine without MinGW's DLLs beside them.
set(CMAKE_EXE_LINKER_FLAGS_INIT -static)
set(CMAKE_CROSSCOMPILING_EMULATOR wine)
