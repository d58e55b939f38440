"""The web page: server-rendered HTML (Jinja2, autoescaped) with htmx, no build step.

Pages: `/` (ask, with a streamed draft posted to `/ask/stream` or a plain htmx post
to `/ask`), `/sources/{doc_id}` (the source viewer: page images with highlight
rectangles for PDFs, marked text for other formats), `/library` (documents,
upload, ingest progress; deleting a document goes through a confirmation page,
`/library/{doc_id}/retire`, that says how to undo it), `/history` and
`/answers/{id}` (the audit log), `/login`. Titles and file names are drawn with
their control, bidi and invisible characters shown (the `line` filter). Every
answer is drawn by `quoteproof.render.html`, so a quote on the page is a verbatim
figure made from a resolved `Quote` (a recorded answer's quotes
re-read from the store by `receipts.verify_recorded`; one that no longer matches is
listed as removed), and model prose is escaped text labelled as generated. The
only HTML the browser inserts (`app.js`) is HTML made here; model prose streamed as
a draft is inserted as text.

The app's Content-Security-Policy allows scripts and styles from `/static` only:
no template holds an inline script, a `style` attribute or an `on…` handler.

Access: every page acts for the request's principal (its API key, from the
`qp_key` cookie that `/login` sets, or a header); without a valid key, in auth
mode, pages redirect to `/login`. A document, answer or job outside the
principal's collections is answered 404, exactly as one that does not exist.
Every request that asks, ingests, deletes or logs in or out is a POST: no GET
changes anything or records an answer. Such a POST is refused (403) when the
browser says it comes from another origin, another port of this host included
(`auth.cross_origin`), or when it lacks the page's form token (`server.csrf`),
which protects the no-auth mode too.
"""

from __future__ import annotations

from quoteproof.server import web_ask, web_history, web_library, web_login, web_sources
from quoteproof.server.web_library import UPLOAD_ROUTE
from quoteproof.server.web_page import TEMPLATES_DIR, router, viewer_url

__all__ = ["TEMPLATES_DIR", "UPLOAD_ROUTE", "router", "viewer_url"]

PARTS = (web_ask, web_sources, web_library, web_history, web_login)
"""The modules whose routes make the page, each by its job: asking, the source
viewer, the library, the audit history, login (each adds its routes to `router`)."""
