# fixture_project and pytest_benchmark_tests are suites the plugin tests run in a subprocess, not
# part of this one.
collect_ignore = ["fixture_project", "pytest_benchmark_tests"]
