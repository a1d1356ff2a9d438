"""Notebook widgets. Each keeps its logic in a pure-Python state object and wires a thin
ipywidgets view to it, so tests drive the logic without a browser."""
from .browser import BrowserState, ErrorBrowser, error_browser

__all__ = ["BrowserState", "ErrorBrowser", "error_browser"]
