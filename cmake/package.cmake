# The installed CMake package (docs/extending.md): `find_package(kiln)` gives
#   kiln::kiln    link it into your own executable and call kiln::run_cli(argc, argv); every
#                 kiln component comes along (whole archive: registrations have no callers;
#                 defined in kilnConfig.cmake.in, as an export would not rename the archive
#                 inside $<LINK_LIBRARY>)
#   kiln::plugin  headers and flags for a plugin library that `kiln --plugin` loads; its kiln
#                 symbols resolve against the kiln executable that loads it
# `cmake --install build --prefix DIR` installs bin/kiln, lib/libkiln*.a, include/kiln/ and
# lib/cmake/kiln/.

include(CMakePackageConfigHelpers)

add_library(kiln_archive STATIC $<TARGET_OBJECTS:kiln_objects> $<TARGET_OBJECTS:kiln_tabular>
  $<TARGET_OBJECTS:kiln_tune>)
target_link_libraries(kiln_archive PUBLIC kiln_core kiln_tensorboard kiln_run kiln_board
  kiln_serving kiln_grpc kiln_onnx SQLite::SQLite3 ${TORCH_LIBRARIES}
  ${OpenMP_CXX_LIBRARIES})
set_target_properties(kiln_archive PROPERTIES OUTPUT_NAME kiln EXPORT_NAME archive)
set_target_properties(kiln_core PROPERTIES EXPORT_NAME core)
set_target_properties(kiln_tensorboard PROPERTIES EXPORT_NAME tensorboard)
set_target_properties(kiln_run PROPERTIES EXPORT_NAME run)
set_target_properties(kiln_board PROPERTIES EXPORT_NAME board)
set_target_properties(kiln_serving PROPERTIES EXPORT_NAME serving)
set_target_properties(kiln_onnx PROPERTIES EXPORT_NAME onnx)
set_target_properties(kiln_grpc PROPERTIES EXPORT_NAME grpc)

add_library(kiln_plugin_api INTERFACE)
target_include_directories(kiln_plugin_api INTERFACE
  $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
# fmt before LibTorch: a LibTorch from pip ships headers of a newer fmt, and a plugin compiled
# against those calls fmt functions that the fmt kiln links does not have.
target_link_libraries(kiln_plugin_api INTERFACE yaml-cpp fmt::fmt ${TORCH_LIBRARIES})
set_target_properties(kiln_plugin_api PROPERTIES EXPORT_NAME plugin)

# The installed kiln finds LibTorch where it was built against.
set_target_properties(kiln PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS kiln RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# kiln_net_http2 exists in a build with gRPC only.
set(KILN_INSTALLED_NET kiln_net)
if(TARGET kiln_net_http2)
  list(APPEND KILN_INSTALLED_NET kiln_net_http2)
endif()
install(TARGETS kiln_core kiln_tensorboard kiln_run kiln_board ${KILN_INSTALLED_NET}
  kiln_serving kiln_grpc kiln_onnx kiln_archive
  kiln_plugin_api EXPORT kilnTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY kiln/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kiln
  FILES_MATCHING PATTERN "*.h" PATTERN "*test*" EXCLUDE)
install(DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/generated/kiln/tensorboard/proto
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kiln/tensorboard FILES_MATCHING PATTERN "*.pb.h")
install(DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/generated/kiln/serving/proto
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kiln/serving FILES_MATCHING PATTERN "*.pb.h")
set(KILN_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)
install(EXPORT kilnTargets NAMESPACE kiln:: DESTINATION ${KILN_CMAKE_DIR})
configure_package_config_file(cmake/kilnConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/kilnConfig.cmake INSTALL_DESTINATION ${KILN_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/kilnConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/kilnConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/kilnConfigVersion.cmake DESTINATION ${KILN_CMAKE_DIR})
