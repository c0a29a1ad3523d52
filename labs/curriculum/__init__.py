"""The curriculum: modules, exercises and their lessons, loaded from lab folders or authored in the browser.

What it owns: `services`, the only writer of `Module` and `Exercise` from lab folders (`sync_labs`, by uuid);
labs authored online (`authoring`, the only writer of `LabDraft`, validated by running its samples); exercise
statements in Markdown (`markdown`); the lesson pages and their figures (`lessons`); and the multi-GPU
calculators' parameters (`calculator_forms`).

What it may import: `labs.models`, `labs.runs` (a draft's samples are run as any submission is),
`labs.courses` (who may author, and the input error the course pages show) and `gpu_worker`'s lab loader and
pure modules.
"""
