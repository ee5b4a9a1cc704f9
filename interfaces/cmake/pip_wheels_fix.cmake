# Injected with -DCMAKE_PROJECT_INCLUDE=... when building interface packages against the
# ROS 2 PyPI wheels (scripts/build_interfaces.sh). The wheels were produced in a manylinux
# container, and their exported <pkg>__rosidl_generator_py CMake targets carry that container's
# Python and NumPy include directories (/opt/python/...). CMake refuses targets whose include
# directories do not exist, so once the package's CMakeLists has run, swap those entries for the
# include directories of the Python interpreter doing this build.
function(robot_core_fix_wheel_include_dirs)
  execute_process(
    COMMAND "${Python3_EXECUTABLE}" -c
      "import sysconfig, numpy; print(sysconfig.get_paths()['include'] + ';' + numpy.get_include())"
    OUTPUT_VARIABLE _here_includes OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
  get_directory_property(_targets DIRECTORY "${CMAKE_SOURCE_DIR}" IMPORTED_TARGETS)
  foreach(_target IN LISTS _targets)
    get_target_property(_dirs ${_target} INTERFACE_INCLUDE_DIRECTORIES)
    if(_dirs AND "${_dirs}" MATCHES "/opt/python/")
      list(FILTER _dirs EXCLUDE REGEX "^/opt/python/")
      list(APPEND _dirs ${_here_includes})
      list(REMOVE_DUPLICATES _dirs)
      set_target_properties(${_target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_dirs}")
    endif()
  endforeach()
endfunction()

if(NOT Python3_EXECUTABLE)
  message(FATAL_ERROR "pip_wheels_fix.cmake needs -DPython3_EXECUTABLE=<venv>/bin/python")
endif()
if(CMAKE_SOURCE_DIR STREQUAL CMAKE_CURRENT_SOURCE_DIR)
  cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL robot_core_fix_wheel_include_dirs)
endif()
