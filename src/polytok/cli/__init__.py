"""The ``polytok`` command: `main` parses the arguments and runs a subcommand; `compare`, `convert`,
`corpus` and `serve` hold the larger ones."""
