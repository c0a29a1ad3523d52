"""Browser tests run Django async-unsafe checks off: Playwright's sync API keeps an event loop in this thread."""

import os

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
