"""What every route of the web page shares: the templates (Jinja2, autoescaped, with
the `line` and `file_name` filters), a page or fragment with the request's context, errors, the
redirect to `/login`, the check that a POST comes from the page, and the link to
a quote in the source viewer."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path, PurePath
from typing import Annotated, Any
from urllib.parse import quote as url_quote
from urllib.parse import urlencode, urlsplit

import jinja2
from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.templating import Jinja2Templates
from markupsafe import Markup, escape

from quoteproof.model import Quote
from quoteproof.render.visible import visible_line
from quoteproof.server import csrf
from quoteproof.server.auth import cross_origin, optional_principal
from quoteproof.server.state import AppState, app_state
from quoteproof.service import Principal

TEMPLATES_DIR = Path(__file__).parent / "templates"
_env = jinja2.Environment(
    loader=jinja2.FileSystemLoader(TEMPLATES_DIR),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_env.filters["line"] = visible_line
"""`{{ name | line }}`: a title, file name or other one-line text with its control,
bidi and invisible characters shown (`render.visible.visible_line`), as the terminal
shows them: "Invoice \u202egpj.exe" never reads "Invoice exe.jpg"."""
_BREAK_AFTER = re.compile(r"([_.\-])")
"""The characters a file name may wrap after."""


def file_name_line(text: str) -> Markup:
    """`text` as `visible_line` shows it, escaped, with a line-break opportunity
    (`<wbr>`) after each "_", "." and "-": a long file name wraps between its parts
    ("lease_agreement_excerpt.md"), not inside a word."""
    return Markup(_BREAK_AFTER.sub(r"\1<wbr>", str(escape(visible_line(text)))))


_env.filters["file_name"] = file_name_line
"""`{{ path_tail | file_name }}`: a file name that wraps between its parts."""
templates = Jinja2Templates(env=_env)

router = APIRouter(include_in_schema=False)
"""The web page's routes: each `web_*` module adds its own (`web` imports them all)."""

StateDep = Annotated[AppState, Depends(app_state)]
MaybePrincipal = Annotated[Principal | None, Depends(optional_principal)]


def viewer_url(quote: Quote) -> str:
    """The source viewer at `quote`: `/sources/{doc_id}?version=&start=&end=#quote`."""
    query = urlencode({"version": quote.doc_version, "start": quote.start, "end": quote.end})
    return f"/sources/{url_quote(quote.doc_id, safe='')}?{query}#quote"


def is_htmx(request: Request) -> bool:
    """Whether `request` comes from htmx (it then gets a fragment, not a page)."""
    return request.headers.get("hx-request") == "true"


def safe_next(target: str | None) -> str:
    """A local path to go to after login; "/" for anything else."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    if any(ch < " " for ch in target) or urlsplit(target).netloc:
        return "/"
    return target


def login_redirect(request: Request) -> Response:
    """Where a request without a valid key goes: the login page (htmx is told to
    load it as a whole page)."""
    path = request.url.path
    if request.url.query:
        path += "?" + request.url.query
    target = "/login?" + urlencode({"next": safe_next(path)})
    if is_htmx(request):
        return Response(status_code=401, headers={"HX-Redirect": target})
    return RedirectResponse(target, status_code=303)


def post_refusal(request: Request, token: object) -> str | None:
    """Why a request that changes something is refused: it comes from another origin,
    or `token` (its form field) is not the page's form token; None when it may go on."""
    if cross_origin(request):
        return "Cross-site request refused."
    if not csrf.valid_csrf_token(request, token):
        return "This form has expired or is not from this site: reload the page and try again."
    return None


def _base_context(request: Request, who: Principal | None, current: str) -> dict[str, Any]:
    state: AppState = request.app.state.quoteproof
    return {
        "request": request,
        "current": current,
        "auth": state.config.auth,
        "user": None if who is None or not state.config.auth else who.name,
        "csrf_token": csrf.csrf_token(request),
    }


def respond(
    request: Request,
    who: Principal | None,
    template: str,
    current: str = "",
    status_code: int = 200,
    headers: Mapping[str, str] | None = None,
    **context: Any,
) -> HTMLResponse:
    """The page `template` for `who`, with the context every page has (`current` the
    menu entry shown as the current one, the login, the form token) and `context`."""
    return templates.TemplateResponse(
        request,
        template,
        {**_base_context(request, who, current), **context},
        status_code=status_code,
        headers=headers,
    )


def fragment(template: str, **context: Any) -> str:
    """The fragment `template` drawn with `context` (for htmx, or inside a page)."""
    return _env.get_template(template).render(**context)


def error(request: Request, who: Principal | None, status_code: int, message: str) -> HTMLResponse:
    """An error: a fragment for htmx, a whole page otherwise."""
    if is_htmx(request):
        return HTMLResponse(fragment("error_fragment.html", message=message), status_code)
    return respond(request, who, "error.html", status_code=status_code, message=message)


def file_name(path: str) -> str:
    """The file name of a document's `path` (the path itself when it has none)."""
    return PurePath(path).name or path


def not_found(request: Request, who: Principal | None) -> HTMLResponse:
    """The 404 answer for what does not exist or `who` may not see."""
    return error(request, who, 404, "Not found.")
