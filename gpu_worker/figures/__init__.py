"""Plotly figures built in Python and sent as JSON; each names its device, slice and backend."""
