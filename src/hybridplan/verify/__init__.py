"""Verification harness: boot-log parser, predicted-vs-observed checks, measured runs, results store, calibration.

The top layer next to cli and web: it reads logs, runs servers and stores measurements, and asks the engine model
(and the planner) for predictions; nothing below imports it.
"""
