"""Registry, command line, result storage and reports: everything between the user and the harness."""
