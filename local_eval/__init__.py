"""Local evaluation: contest stand-ins, the harness replica, benchmark tasks, scoring and reports."""
