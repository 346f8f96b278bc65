"""Jobs run in a child process through harness/children/, each with the parent side that reads its events.

runner.py (parent) and worker.py (child) check and time one job's implementations, a crash or a hang
becoming a record; pairwise.py times two implementations side by side, and tuning_session.py answers the
table search's requests one after another, each in one child with its parent handle.
"""
