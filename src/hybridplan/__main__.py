"""`python -m hybridplan` runs the CLI."""

from hybridplan.cli import main

main()
