"""A course's gradebook: students by assignment exercises, and its CSV export in Canvas's and Moodle's columns.

Each cell names its counted run, device and harness version (`labs.courses.grading.Grade`), so an exported number can
be traced back to the measurement it came from.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Any

from labs.courses import access, grading
from labs.models import Assignment, AssignmentExercise, Course

LMS_FORMATS = ("canvas", "moodle")


@dataclass
class Row:
    student: Any
    grades: list[grading.Grade]
    totals: dict[int, float]  # assignment id -> points


def items_of(course: Course) -> list[AssignmentExercise]:
    return list(
        AssignmentExercise.objects.filter(assignment__course=course)
        .select_related("assignment", "exercise")
        .order_by("assignment__due_at", "assignment_id", "order", "id")
    )


def rows(course: Course, items: list[AssignmentExercise] | None = None) -> list[Row]:
    """One row per student, one grade per assignment exercise."""
    items = items_of(course) if items is None else items
    table = []
    for student in access.students(course):
        dates: dict[int, grading.Dates] = {}
        grades = []
        totals: dict[int, float] = {}
        for item in items:
            assignment = item.assignment
            if assignment.pk not in dates:
                dates[assignment.pk] = grading.dates_for(assignment, student)
            g = grading.grade(item, student, dates[assignment.pk])
            grades.append(g)
            totals[assignment.pk] = totals.get(assignment.pk, 0.0) + (g.score or 0.0)
        table.append(Row(student, grades, totals))
    return table


def _assignments(items: list[AssignmentExercise]) -> list[Assignment]:
    seen: dict[int, Assignment] = {}
    for item in items:
        seen.setdefault(item.assignment.pk, item.assignment)
    return list(seen.values())


def possible(items: list[AssignmentExercise], assignment: Assignment) -> float:
    return sum(i.points for i in items if i.assignment_id == assignment.pk)


def export_csv(course: Course, lms: str) -> str:
    """One column per assignment (its total), in the columns Canvas's or Moodle's grade import reads.

    Canvas: Student, ID, SIS User ID, SIS Login ID, Section, then one column per assignment, after a
    "Points Possible" row. Moodle: First name, Last name, Username, Email address, then one column per item
    (matched on Username in Moodle's import mapping).
    """
    if lms not in LMS_FORMATS:
        raise ValueError(f"export format is {' or '.join(LMS_FORMATS)}")
    items = items_of(course)
    assignments = _assignments(items)
    titles = [a.title for a in assignments]
    out = io.StringIO()
    writer = csv.writer(out)
    if lms == "canvas":
        writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", *titles])
        writer.writerow(["    Points Possible", "", "", "", "", *[f"{possible(items, a):g}" for a in assignments]])
        for row in rows(course, items):
            s = row.student
            name = f"{s.last_name}, {s.first_name}" if s.last_name else s.get_username()
            scores = [f"{row.totals.get(a.pk, 0.0):g}" for a in assignments]
            writer.writerow([name, s.pk, "", s.get_username(), course.title, *scores])
    else:
        writer.writerow(["First name", "Last name", "Username", "Email address", *titles])
        for row in rows(course, items):
            s = row.student
            scores = [f"{row.totals.get(a.pk, 0.0):g}" for a in assignments]
            writer.writerow([s.first_name, s.last_name, s.get_username(), s.email, *scores])
    return out.getvalue()
