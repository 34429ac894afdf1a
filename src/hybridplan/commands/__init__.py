"""CLI command modules; each registers its commands on `hybridplan.cli.app`."""
