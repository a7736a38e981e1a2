"""`csl serve`: a local web table to play CSL against the AI and review games.

`create_app` builds the Starlette app: the page (``static/``) and its JSON API, described
field by field in docs/web-api.md.
"""

from __future__ import annotations

from csl_ai.web.app import create_app

__all__ = ["create_app"]
