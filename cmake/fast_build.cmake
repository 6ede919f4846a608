# Build speed on a 2-core machine: Ninja (chosen by the Makefile), ccache, mold, and one shared
# precompiled header for <torch/torch.h> (set up per target in the main CMakeLists).

find_program(KILN_CCACHE ccache)
if(KILN_CCACHE)
  # A precompiled header is only cacheable when ccache ignores its timestamp and defines. Paths
  # under the source tree are hashed relative to it (CCACHE_BASEDIR), so that a clone in another
  # folder (CI's, a developer's second checkout) finds what this one compiled: without it every
  # compile of a new folder was a miss, and a cold CI run took more than an hour.
  set(KILN_LAUNCHER ${CMAKE_COMMAND} -E env
      CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
      CCACHE_BASEDIR=${CMAKE_SOURCE_DIR}
      ${KILN_CCACHE})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${KILN_LAUNCHER})
  add_compile_options(-fpch-preprocess)
endif()

find_program(KILN_MOLD mold)
if(KILN_MOLD)
  add_link_options(-fuse-ld=mold)
endif()

# Debug info for torch-heavy code makes objects and links several times slower; opt in with
# -DKILN_DEBUG_INFO=ON.
option(KILN_DEBUG_INFO "Keep debug info in Release builds" OFF)
if(NOT KILN_DEBUG_INFO)
  set(CMAKE_CXX_FLAGS_RELEASE "-O2 -DNDEBUG")
endif()
