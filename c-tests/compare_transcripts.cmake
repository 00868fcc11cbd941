# Runs the same test program built against our library and the official one
# and fails unless both print the same transcript on stdout. RUN: the cross
# emulator (CMAKE_CROSSCOMPILING_EMULATOR, a list), when there is one.
execute_process(COMMAND ${RUN} ${OURS} OUTPUT_VARIABLE ours RESULT_VARIABLE ours_rc)
execute_process(COMMAND ${RUN} ${OFFICIAL} OUTPUT_VARIABLE official RESULT_VARIABLE official_rc)
if(NOT ours_rc EQUAL 0 OR NOT official_rc EQUAL 0)
  message(FATAL_ERROR "exit codes differ from 0: ours ${ours_rc}, official ${official_rc}")
endif()
if(NOT ours STREQUAL official)
  message(FATAL_ERROR "transcripts differ\n--- official\n${official}\n--- ours\n${ours}")
endif()
message(STATUS "identical transcripts:\n${ours}")
