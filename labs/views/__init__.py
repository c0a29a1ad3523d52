"""Views: HTML pages and the JSON API; any change goes through a package's services (`labs.runs.services`, ...)."""
