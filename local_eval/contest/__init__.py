"""Our stand-ins of the two top-level modules the contest harness provides (`models`,
`submit_interface`), installed as top-level modules by the editable install (pyproject.toml)."""
