# Installing cuemu (included by the top-level CMakeLists.txt):
#   lib/cuemu/libcuda.so.1 (+ libcuda.so), lib/cuemu/libnvJitLink.so.13, libnvrtc.so.13 (+ .so),
#   libnvidia-ml.so.1 (+ .so), libcuemu-dev-files.so                  never where a real driver lives
#   lib/cuemu/ptx-toolkit/{bin/ptxas -> ../../cuemu-ptxas, bin/nvlink, nvvm}   the CUDA root `cuemu run` gives JAX
#   lib/cuemu/toolkit/lib64/libnvrtc.so.13 (libnvrtc.so.13 links there), toolkit/{include,bin,lib64/libcudadevrt.a}
#                                        links to the CUDA toolkit, for CuPy (below)
#   lib/cuemu/cuemu-nvcc, nvcc-shim/{bin/nvcc -> ../../cuemu-nvcc, lib64, include}   a CUDA root whose nvcc is
#                                        cuemu-nvcc: `cuemu run` puts its bin/ first on PATH (emu/nvcc)
#   lib/cuemu/libcuemu-native.so         the native tier's compiler (where LLVM 14 was found; not in the wheel)
#   bin/cuemu                                                                        finds lib/cuemu from bin/
#   include/cuemu/{cuemu.h, cuda.h, cudaTypedefs.h, ...}                           cuemu's headers (not the toolkit's)
#   lib/cmake/cuemu/cuemuConfig.cmake    find_package(cuemu): cuemu::cuda (the driver), cuemu::cuemu (the command)
#   lib/pkgconfig/cuemu.pc               pkg-config --cflags --libs cuemu
#   share/doc/cuemu/                     README and docs
# and a Debian package through CPack (cpack -G DEB): cuemu_<version>_<arch>.deb installing under /usr.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(CUEMU_INSTALL_LIBDIR ${CMAKE_INSTALL_LIBDIR}/cuemu)
set(CUEMU_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/cuemu)
set(CUEMU_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/cuemu)

install(TARGETS cuda cuemu_nvjitlink EXPORT cuemuTargets
        LIBRARY DESTINATION ${CUEMU_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT development)
install(TARGETS cuemu_nvml LIBRARY DESTINATION ${CUEMU_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT development)
install(TARGETS cuemu_dev_files LIBRARY DESTINATION ${CUEMU_INSTALL_LIBDIR} COMPONENT runtime)
# cuemu's NVRTC. CuPy (through cuda.pathfinder) takes the folder above the real file of the libnvrtc.so.13 it loaded
# for the CUDA toolkit's root and looks there for lib64/libcudadevrt.a (RawKernels with dynamic parallelism), bin/nvcc
# and include/ (emu/CMakeLists.txt lays out the build tree the same way). So the library lives in
# lib/cuemu/toolkit/lib64, lib/cuemu/libnvrtc.so.13 links to it, and lib/cuemu/toolkit links to the toolkit's
# include, bin and libcudadevrt.a, at CUEMU_TOOLKIT_ROOT (the toolkit found at configure time; links that find
# nothing where cuemu is installed are as if they were not there). A wheel cannot hold links (they would become
# copies of the whole toolkit), so pip installs leave the layout out (CUEMU_INSTALL_TOOLKIT_LAYOUT=OFF).
option(CUEMU_INSTALL_TOOLKIT_LAYOUT "Install libnvrtc.so.13 inside lib/cuemu/toolkit with links to the CUDA toolkit" ON)
set(cuemu_default_toolkit_root "")
if(CUEMU_NVCC)
  get_filename_component(cuemu_default_toolkit_root "${CUEMU_NVCC}" DIRECTORY)
  get_filename_component(cuemu_default_toolkit_root "${cuemu_default_toolkit_root}" DIRECTORY)
endif()
set(CUEMU_TOOLKIT_ROOT "${cuemu_default_toolkit_root}" CACHE PATH "CUDA toolkit the installed toolkit layout links to")
if(CUEMU_INSTALL_TOOLKIT_LAYOUT)
  install(TARGETS cuemu_nvrtc EXPORT cuemuTargets LIBRARY DESTINATION ${CUEMU_INSTALL_LIBDIR}/toolkit/lib64
          COMPONENT runtime NAMELINK_SKIP)
  set(cuemu_links "libnvrtc.so.13=toolkit/lib64/libnvrtc.so.13;libnvrtc.so=libnvrtc.so.13"
                  "nvcc-shim/bin/nvcc=../../cuemu-nvcc")
  if(CUEMU_TOOLKIT_ROOT)
    list(APPEND cuemu_links "toolkit/include=${CUEMU_TOOLKIT_ROOT}/include" "toolkit/bin=${CUEMU_TOOLKIT_ROOT}/bin"
         "toolkit/lib64/libcudadevrt.a=${CUEMU_TOOLKIT_ROOT}/lib64/libcudadevrt.a"
         "ptx-toolkit/bin/ptxas=../../cuemu-ptxas" "ptx-toolkit/bin/nvlink=${CUEMU_TOOLKIT_ROOT}/bin/nvlink"
         "ptx-toolkit/nvvm=${CUEMU_TOOLKIT_ROOT}/nvvm" "nvcc-shim/lib64=${CUEMU_TOOLKIT_ROOT}/lib64"
         "nvcc-shim/include=${CUEMU_TOOLKIT_ROOT}/include")
  endif()
  foreach(link IN LISTS cuemu_links)
    string(REPLACE "=" ";" parts "${link}")
    list(GET parts 0 name)
    list(GET parts 1 target)
    install(CODE "
      set(cuemu_link \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CUEMU_INSTALL_LIBDIR}/${name}\")
      get_filename_component(cuemu_link_dir \"\${cuemu_link}\" DIRECTORY)
      file(MAKE_DIRECTORY \"\${cuemu_link_dir}\")
      file(REMOVE \"\${cuemu_link}\")
      file(CREATE_LINK \"${target}\" \"\${cuemu_link}\" SYMBOLIC)
      message(STATUS \"Installing: \${cuemu_link} -> ${target}\")" COMPONENT runtime)
  endforeach()
else()
  install(TARGETS cuemu_nvrtc EXPORT cuemuTargets LIBRARY DESTINATION ${CUEMU_INSTALL_LIBDIR} COMPONENT runtime
          NAMELINK_COMPONENT development)
endif()
install(TARGETS cuemu EXPORT cuemuTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
# The native tier's compiler, beside the library, where the interpreter looks for it (docs/native-tier.md). It links
# LLVM 14 and is loaded only with CUEMU_NATIVE=on, so the package suggests LLVM instead of depending on it (without it
# `cuemu info` says the tier does not load, and kernels are interpreted). The portable build (the wheel, which must
# need only glibc) leaves it out.
if(TARGET cuemu-native AND NOT CUEMU_PORTABLE)
  install(TARGETS cuemu-native LIBRARY DESTINATION ${CUEMU_INSTALL_LIBDIR} COMPONENT runtime)
  set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libllvm14")
endif()
install(TARGETS cuemu_nvjitlink_lto RUNTIME DESTINATION ${CUEMU_INSTALL_LIBDIR} COMPONENT runtime)
install(TARGETS cuemu_ptxas RUNTIME DESTINATION ${CUEMU_INSTALL_LIBDIR} COMPONENT runtime)
install(TARGETS cuemu_nvcc RUNTIME DESTINATION ${CUEMU_INSTALL_LIBDIR} COMPONENT runtime)
target_include_directories(cuda INTERFACE $<INSTALL_INTERFACE:${CUEMU_INSTALL_INCLUDEDIR}>)
file(GLOB CUEMU_PUBLIC_HEADERS ${PROJECT_SOURCE_DIR}/include/*.h)
install(FILES ${CUEMU_PUBLIC_HEADERS} DESTINATION ${CUEMU_INSTALL_INCLUDEDIR} COMPONENT development)
install(EXPORT cuemuTargets NAMESPACE cuemu:: DESTINATION ${CUEMU_INSTALL_CMAKEDIR} COMPONENT development)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/cuemuConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/cuemuConfig.cmake INSTALL_DESTINATION ${CUEMU_INSTALL_CMAKEDIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/cuemuConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/cuemuConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/cuemuConfigVersion.cmake
        DESTINATION ${CUEMU_INSTALL_CMAKEDIR} COMPONENT development)
configure_file(${CMAKE_CURRENT_LIST_DIR}/cuemu.pc.in ${CMAKE_CURRENT_BINARY_DIR}/cuemu.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/cuemu.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT development)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/CHANGELOG.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT runtime)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT runtime)

# The command looks for the library relative to itself: bin/../lib/cuemu in a plain install, and wherever
# CMAKE_INSTALL_LIBDIR puts it (lib/x86_64-linux-gnu/cuemu on Debian).
file(RELATIVE_PATH CUEMU_BIN_TO_LIB ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR}/cuemu)
target_compile_definitions(cuemu PRIVATE CUEMU_BIN_TO_LIB="${CUEMU_BIN_TO_LIB}")

set(CPACK_PACKAGE_NAME cuemu)
set(CPACK_PACKAGE_VENDOR "cuemu")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "CUDA driver (libcuda.so.1) that runs CUDA programs on the CPU")
set(CPACK_PACKAGE_CONTACT "cuemu maintainers")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= 2.34), libstdc++6 (>= 12), libzstd1, liblz4-1")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL OFF)
# The build keeps its debug info; the package does not, but keeps the symbol tables (the native tier reads
# libcuda.so.1's): CPack's own stripping would remove both.
set(CPACK_STRIP_FILES FALSE)
set(CPACK_CUEMU_STRIP "${CMAKE_STRIP}")
set(CPACK_PRE_BUILD_SCRIPTS ${CMAKE_CURRENT_LIST_DIR}/strip_debug.cmake)
set(CPACK_PACKAGE_DESCRIPTION "cuemu emulates NVIDIA's CUDA driver API (driver 580, CUDA 13) in software. The
 library installs under /usr/lib/cuemu, never in place of a real driver; `cuemu run -- PROGRAM` runs a program
 with it.")
include(CPack)
