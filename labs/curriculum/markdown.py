"""Exercise statements: Markdown rendered with markdown-it-py, then sanitised with nh3."""

import nh3
from markdown_it import MarkdownIt

_md = MarkdownIt("commonmark", {"html": False}).enable("table")


def render_markdown(text: str) -> str:
    """Safe HTML for a statement; raw HTML in the source is dropped, not trusted."""
    return nh3.clean(_md.render(text))
