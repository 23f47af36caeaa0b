# fixture_project is a suite the plugin tests run in a subprocess, not part of this one.
collect_ignore = ["fixture_project"]
