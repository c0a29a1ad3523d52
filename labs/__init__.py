"""The learning domain: modules, exercises, submissions, their pages, API, stream and tasks."""
