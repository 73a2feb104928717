# replay.cmake - gcsnap-agent --source dotnet against recorded heap walks
# (tests/fixtures/nettrace), played by diag.py serve: no .NET needed, so
# these run wherever python3 does. Suites of replay_test.py: replay (the
# .NET 10 and .NET 8 streams captured whole, strictly valid, all that
# `Heap --expect` says), faults (streams cut, stalled, refused, corrupted,
# and real ones whose runtime dropped events: exit 1, the reason, no file),
# connect (no socket, nobody listening, peers that hang up, answer junk or
# nothing; dotnet:PID through the process's TMPDIR), sweep (every 397th byte
# of the .NET 10 stream garbled in turn: refused with a reason, or a dump
# that validates).
foreach(suite replay faults connect sweep)
  add_test(NAME dotnet_replay_${suite}
    COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/replay_test.py ${suite}
            ${CMAKE_BINARY_DIR}/bin ${CMAKE_SOURCE_DIR}/tests/fixtures/nettrace
            ${CMAKE_CURRENT_BINARY_DIR}/work-replay-${suite})
  set_tests_properties(dotnet_replay_${suite} PROPERTIES LABELS "agent;dotnet"
                       SKIP_RETURN_CODE 77 TIMEOUT 120)
endforeach()
