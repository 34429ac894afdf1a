"""CLI command modules; each registers its commands on `hybridplan.commands.app.app`."""
