"""Courses: their people and assignments, grades from measured runs, leaderboards, similarity and LTI.

What it owns: `services`, the only writer of the course models (courses, memberships, groups, assignments,
overrides, feedback, regrades); `lti`, the only writer of the LTI models (platforms, linked courses, launches,
roster and grade passback); who may see and do what in a course (`access`); grades (`grading`, read-only, from
stored runs), the `gradebook` and its CSV, the `leaderboard` and code similarity (`integrity`).

What it may import: `labs.models`, `labs.accounts` (the site's roles) and `labs.runs` (a regrade submits its
runs through `labs.runs.services`); nothing of `labs.curriculum` or `labs.fleet`.
"""
