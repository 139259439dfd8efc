"""Stage: check links — checks that need the whole site: internal links and anchors."""

from __future__ import annotations

from urllib.parse import unquote

from .errors import Code, Problems
from .markdown import split_href
from .model import Page


def check_links(pages: list[Page], planned_slugs: set[str], problems: Problems) -> int:
    """Report every internal link whose page or anchor does not exist. Returns the number checked."""
    by_file = {p.source.url: p for p in pages}
    checked = 0
    for page in pages:
        for link in page.facts.links:
            checked += 1
            target, anchor = split_href(link.href)
            href = unquote(link.href)  # as the author wrote it (markdown-it percent-encodes)
            line = page.source.body_line + link.line + 1
            if target == "":
                dest = page
            elif target in by_file:
                dest = by_file[target]
            elif target.endswith(".html") and target[:-5] in planned_slugs:
                if anchor:
                    problems.add(
                        Code.LINK,
                        page.source.rel,
                        line,
                        f"link '{href}': '{target}' is a planned page (即将推出); it has no anchors yet",
                    )
                continue
            else:
                hint = ""
                if target.endswith(".md") and target[:-3] + ".html" in by_file:
                    hint = f" (write '{target[:-3]}.html')"
                problems.add(Code.LINK, page.source.rel, line, f"broken link '{href}': no page '{target}'{hint}")
                continue
            if anchor and anchor not in dest.facts.anchors:
                problems.add(
                    Code.LINK,
                    page.source.rel,
                    line,
                    f"broken link '{href}': {dest.source.url} has no anchor '#{anchor}'",
                )
    return checked
