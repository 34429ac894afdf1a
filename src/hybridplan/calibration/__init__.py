"""The public evidence hybridplan is held to, and the calibration fitted on it: public boot logs and launch reports
with their links, the measured launches a verdict's confidence and a plan's fraction rest on (`sources.all_evidence`,
the cookbook pages' records among them), the comparison of the model with each public log, and the fit of the
planner constants on measured runs. GPU runs and their results store are verify/'s."""
