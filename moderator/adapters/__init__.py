"""Adapters: the only modules that touch the clock, devices and speech engines."""
