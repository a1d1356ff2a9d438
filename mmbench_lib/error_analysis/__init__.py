"""Error analysis as MMMU §5 and CMMMU §4.3: sampled wrong cases, automatic tags, a case browser.

``errors`` holds the logic (sampling, tags, annotations, the distribution); ``browser`` the
JupyterLab widget, a thin ipywidgets view over a pure-Python state object."""
from mmbench_lib.error_analysis.browser import BrowserState, ErrorBrowser, error_browser

__all__ = ["BrowserState", "ErrorBrowser", "error_browser"]
