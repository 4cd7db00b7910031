# mpicc, in two variants from tools/mpicc.in:
#   build tree: <runtime output dir>/mpicc with absolute paths to the source
#               include/ directory and the build's library directory;
#   install:    ${CMAKE_INSTALL_BINDIR}/mpicc, relocatable: it finds the
#               include and library directories relative to its own location.
# Included from tools/mpiexec/CMakeLists.txt.

set(_mpicc_in "${CMAKE_CURRENT_LIST_DIR}/mpicc.in")

if(CMAKE_RUNTIME_OUTPUT_DIRECTORY)
  set(_mpicc_bindir "${CMAKE_RUNTIME_OUTPUT_DIRECTORY}")
else()
  set(_mpicc_bindir "${CMAKE_BINARY_DIR}/bin")
endif()

# Where libmpi.so lands in the build tree.
set(_mpicc_build_libdir "${CMAKE_BINARY_DIR}/lib")
if(CMAKE_LIBRARY_OUTPUT_DIRECTORY)
  set(_mpicc_build_libdir "${CMAKE_LIBRARY_OUTPUT_DIRECTORY}")
endif()
if(TARGET mpi)
  get_target_property(_mpicc_mpi_libdir mpi LIBRARY_OUTPUT_DIRECTORY)
  if(_mpicc_mpi_libdir)
    set(_mpicc_build_libdir "${_mpicc_mpi_libdir}")
  endif()
endif()

# --- build-tree variant
set(FERRY_MPICC_VARIANT "build tree")
set(FERRY_MPICC_INCDIR "'${PROJECT_SOURCE_DIR}/include'")
set(FERRY_MPICC_LIBDIR "'${_mpicc_build_libdir}'")
configure_file("${_mpicc_in}" "${CMAKE_CURRENT_BINARY_DIR}/mpicc-build/mpicc" @ONLY)
file(COPY "${CMAKE_CURRENT_BINARY_DIR}/mpicc-build/mpicc"
     DESTINATION "${_mpicc_bindir}"
     FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE
                      GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)

# --- installed, relocatable variant
file(RELATIVE_PATH _mpicc_inc_rel "${CMAKE_INSTALL_FULL_BINDIR}" "${CMAKE_INSTALL_FULL_INCLUDEDIR}")
file(RELATIVE_PATH _mpicc_lib_rel "${CMAKE_INSTALL_FULL_BINDIR}" "${CMAKE_INSTALL_FULL_LIBDIR}")
set(FERRY_MPICC_VARIANT "installed")
set(FERRY_MPICC_INCDIR "\"$(ferry_dir '${_mpicc_inc_rel}')\"")
set(FERRY_MPICC_LIBDIR "\"$(ferry_dir '${_mpicc_lib_rel}')\"")
configure_file("${_mpicc_in}" "${CMAKE_CURRENT_BINARY_DIR}/mpicc-install/mpicc" @ONLY)
install(PROGRAMS "${CMAKE_CURRENT_BINARY_DIR}/mpicc-install/mpicc"
        DESTINATION "${CMAKE_INSTALL_BINDIR}")

unset(FERRY_MPICC_VARIANT)
unset(FERRY_MPICC_INCDIR)
unset(FERRY_MPICC_LIBDIR)
