"""Runs: a learner's submission, from submit to its verdict, and everything that reads one.

What it owns: `services`, the only writer of `Submission` and `SubmissionEvent` (submit, store each event and
the result, claim and reap through the job `ledger`, ask for a profile); the learner's `drafts` kept on the
server (`SourceDraft`); the abuse `limits` on submitting;
who may read a run and what of it (`visibility`); the roofline points a job carries (`roofline_points`); and
a learner's progress read from their runs (`progress`).

What it may import: `labs.models`, `labs.fleet` (where a run goes and how long it waits) and `gpu_worker`'s
contract (`gpu_worker.protocol`, the lab loader); nothing of `labs.courses` or `labs.curriculum`, which
submit runs through `services` (regrades, a draft lab's validation).
"""
