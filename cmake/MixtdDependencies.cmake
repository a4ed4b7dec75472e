# Every external dependency of mixtd, found once, as imported targets.
# All of them come from Debian packages (scripts/setup); nothing is fetched.
find_package(PkgConfig REQUIRED)

# SystemC 2.3.4 + TLM-2.0: Debian ships pkg-config files only. libsystemc is
# built as C++17 and its headers check SC_CPLUSPLUS against the build, so every
# TU including SystemC must say 201703L even though we compile C++20.
pkg_check_modules(SYSTEMC REQUIRED IMPORTED_TARGET systemc)
pkg_check_modules(TLM REQUIRED IMPORTED_TARGET tlm)
add_library(mixtd_systemc INTERFACE)
add_library(mixtd::systemc ALIAS mixtd_systemc)
target_link_libraries(mixtd_systemc INTERFACE PkgConfig::SYSTEMC PkgConfig::TLM)
target_compile_definitions(mixtd_systemc INTERFACE SC_CPLUSPLUS=201703L SC_INCLUDE_DYNAMIC_PROCESSES)

find_package(verilator HINTS $ENV{VERILATOR_ROOT} /usr/share/verilator REQUIRED)
find_package(Eigen3 3.4 REQUIRED NO_MODULE)
find_package(Armadillo REQUIRED)
add_library(mixtd_armadillo INTERFACE)
add_library(mixtd::armadillo ALIAS mixtd_armadillo)
target_include_directories(mixtd_armadillo INTERFACE ${ARMADILLO_INCLUDE_DIRS})
target_link_libraries(mixtd_armadillo INTERFACE ${ARMADILLO_LIBRARIES})

find_package(yaml-cpp REQUIRED)        # yaml-cpp 0.7: the target is `yaml-cpp`
find_package(Protobuf REQUIRED)
find_package(ONNX REQUIRED)            # targets onnx, onnx_proto (ONNX_ML=1)
find_package(nlohmann_json REQUIRED)
find_package(CLI11 REQUIRED)
find_package(ZLIB REQUIRED)
find_package(Threads REQUIRED)

if(MIXTD_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(MIXTD_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()

# LibTorch (Debian libtorch-dev, CPU). Its headers are heavy: only models/nn and
# its tests include them, each in its own translation unit.
find_package(Torch REQUIRED)
add_library(mixtd_torch INTERFACE)
add_library(mixtd::torch ALIAS mixtd_torch)
target_link_libraries(mixtd_torch INTERFACE ${TORCH_LIBRARIES})
target_include_directories(mixtd_torch INTERFACE ${TORCH_INCLUDE_DIRS})

find_program(MIXTD_PYTHON3 NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
find_program(MIXTD_YOSYS yosys)

# verilate() + Verilator's runtime headers as system headers, so that their
# own warnings do not drown ours under -Wall -Wextra.
function(mixtd_verilate target)
  verilate(${target} ${ARGN})
  target_include_directories(${target} SYSTEM PRIVATE ${VERILATOR_ROOT}/include ${VERILATOR_ROOT}/include/vltstd)
  # Verilator's runtime .cpp files and the generated model are third-party
  # code: compile them without our warning flags. The generated models of
  # the RTL test grids are many small files: -O1 halves their build time and
  # they still run far faster than the tests need.
  get_target_property(srcs ${target} SOURCES)
  foreach(src IN LISTS srcs)
    if(src MATCHES "^${VERILATOR_ROOT}/include/")
      set_source_files_properties(${src} TARGET_DIRECTORY ${target} PROPERTIES COMPILE_OPTIONS "-w")
    elseif(src MATCHES "/V[^/]*\\.dir/")
      # Test models at -O1; benchmarks keep the build's optimisation.
      if(target MATCHES "^test_")
        set_source_files_properties(${src} TARGET_DIRECTORY ${target} PROPERTIES COMPILE_OPTIONS "-w;-O1")
      else()
        set_source_files_properties(${src} TARGET_DIRECTORY ${target} PROPERTIES COMPILE_OPTIONS "-w")
      endif()
    endif()
  endforeach()
endfunction()
