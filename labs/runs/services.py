"""Every state change of a run; views, consumers, tasks and the other packages' services call these.

`submit_run` saves a submission and sends its job to a worker queue, `record_events`
stores and broadcasts a worker's streamed events (a batch at a time), `record_result` stores the result
document once; `claim_run` and `reap_runs` keep the job ledger (`labs.runs.ledger`:
claims, leases, the attempt cap, jobs the broker lost); `request_profile` and
`record_profile` run Nsight Compute off the verdict's path. A job carries the
learner's earlier roofline points and the reference's (`labs.runs.roofline_points`).
"""

from __future__ import annotations

import logging
from typing import Any

import redis
from asgiref.sync import async_to_sync
from celery import current_app
from channels.layers import get_channel_layer
from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone
from pydantic import ValidationError

from gpu_worker.protocol import LANGUAGES, MAX_SOURCE_BYTES, Event, ExerciseRef, Harness, Job, Result
from labs.fleet import budgets, heartbeats, languages, stats
from labs.fleet import routing as fleet_routing  # plain `routing` reads as the WebSocket routes (labs.routing)
from labs.models import Exercise, Submission, SubmissionEvent
from labs.models.run import Status, Verdict
from labs.runs import ledger, limits
from labs.runs.roofline_points import history_points, reference_point

log = logging.getLogger(__name__)

FINAL_EVENTS = ("done", "error")
RUN_TASK = ledger.RUN_TASK
PROFILE_TASK = "gpu_worker.profile_run"  # Nsight Compute, on the slice's profile lane (`<queue>.profile`)


class SubmissionRejected(ValueError):
    """Bad input from a learner: a plain message and an HTTP status; nothing is saved."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.message, self.status = message, status


def _validate_submission(user: User, exercise_slug: Any, language: Any, source: Any, draft: bool = False) -> Exercise:
    if not isinstance(exercise_slug, str) or not exercise_slug:
        raise SubmissionRejected("Say which exercise this is for ('exercise').")
    exercises = Exercise.objects.all() if draft else Exercise.objects.visible_to(user)
    exercise = exercises.filter(slug=exercise_slug).first()
    if exercise is None:
        raise SubmissionRejected(f"There is no exercise called '{exercise_slug}'.", status=404)
    if language not in LANGUAGES:
        raise SubmissionRejected(f"Language must be one of {', '.join(LANGUAGES)}; got {language!r}.")
    if language not in exercise.languages:
        raise SubmissionRejected(f"'{exercise.title}' is not offered in {language}.")
    if not isinstance(source, str) or not source.strip():
        raise SubmissionRejected("The source is empty.")
    if len(source.encode()) > MAX_SOURCE_BYTES:
        raise SubmissionRejected(f"The source is over the {MAX_SOURCE_BYTES // 1024} KiB limit.", status=413)
    return exercise


def build_job(submission: Submission) -> Job:
    """The worker's job for a saved submission, with the points its roofline is drawn beside."""
    exercise = submission.exercise
    return Job(
        submission_id=submission.pk,
        exercise=ExerciseRef(
            slug=exercise.slug,
            language=submission.language,
            entry=exercise.entry,
            harness=exercise.harness,
            limits=exercise.limits,
            version=exercise.version,
        ),
        source=submission.source,
        launch=submission.launch,
        requested_by=submission.owner.get_username(),
        history=history_points(submission),
        reference=reference_point(submission),
    )


def submit_run(
    user: User,
    exercise_slug: Any,
    language: Any,
    source: Any,
    *,
    queue: str = "",
    rate_limited: bool = True,
    lane: str = "practice",
    draft: bool = False,
    block_size: int | None = None,
    sweep: bool = False,
    launch: dict | None = None,
) -> Submission:
    """Save a learner's run and queue its job on the least-loaded pool of its lane; a rejected one saves nothing.

    `lane` is "graded" for runs whose timings count (exclusive slices only), else "practice".
    A learner's run is held to the abuse limits (`labs.runs.limits`: rate, one in flight, the lab's queue cap)
    and the GPU-time budgets (`labs.fleet.budgets`). A regrade (`labs.courses.services.start_regrade`) passes
    the original run's queue, so the re-execution lands on the same kind of slice, and is held to none of them;
    a lab's validation
    (`labs.curriculum.authoring`) runs its samples on its unpublished draft exercise (`draft=True`).
    The queued event says the run's place and expected wait, and why it waits if no worker serves it.
    `block_size` is the learner's choice among the exercise's `launch_choices`, and `sweep` asks for the
    others too (`chosen_launch`); a regrade passes the original run's resolved `launch` instead.
    """
    exercise = _validate_submission(user, exercise_slug, language, source, draft)
    launch = launch if launch is not None else chosen_launch(exercise, block_size, sweep)
    queue = queue or languages.queue_for(exercise, language, lane)
    if not rate_limited:
        submission, queued = _save_run(user, exercise, language, source, queue, lane, launch)
        _broadcast(submission, queued)
        return submission
    in_flight = (Status.QUEUED, Status.RUNNING)
    try:
        budgets.check(user, queue)
        limits.check_queue_cap(Submission.objects.filter(status=Status.QUEUED).count())
        limits.take_run_slot(user)
        with limits.learner_lock(user):
            limits.check_in_flight(Submission.objects.filter(owner=user, status__in=in_flight).count())
            submission, queued = _save_run(user, exercise, language, source, queue, lane, launch)
    except budgets.OverGpuBudget as exc:
        raise SubmissionRejected(exc.message, status=429) from exc
    except limits.LimitReached as exc:
        raise SubmissionRejected(exc.message, exc.status) from None
    _broadcast(submission, queued)
    return submission


def chosen_launch(exercise: Exercise, block_size: int | None, sweep: bool = False) -> dict | None:
    """The job's launch for the learner's block size (None: the exercise's own); a size not offered is refused.

    With `sweep`, the launch also asks for every other block size offered (run on a GPU, drawn as a curve);
    without a `block_size` the exercise's own block is the learner's point on it.
    """
    if block_size is None and not sweep:
        return None
    harness = Harness.model_validate(exercise.harness)
    choices = harness.launch_choices
    if choices is None:
        raise SubmissionRejected(f"'{exercise.title}' has a fixed launch; leave out 'block_size' and 'sweep'.")
    if block_size is None:
        own = harness.launch.block[0]
        block_size = int(own) if own.isdigit() and int(own) in choices.block else choices.block[0]
    try:
        return choices.launch(block_size, sweep=sweep).to_wire()
    except ValueError as exc:
        raise SubmissionRejected(f"For '{exercise.title}' the {exc}.") from None


def _save_run(
    user: User, exercise: Exercise, language: str, source: str, queue: str, lane: str, launch: dict | None = None
) -> tuple[Submission, dict]:
    notice = heartbeats.queue_notice(queue)
    with transaction.atomic():
        submission = Submission.objects.create(
            owner=user,
            exercise=exercise,
            language=language,
            source=source,
            queue=queue,
            exercise_version=exercise.version,
            launch=launch,
        )
        job = build_job(submission)
        where = fleet_routing.place(submission)
        facts: dict[str, Any] = {"queue": submission.queue, "lane": lane, **where}
        # beside its place and wait, what is left of the learner's GPU time (none of it is spent on the CPU tier)
        left = budgets.left_words(user, stats.job_time(queue).seconds) if budgets.is_gpu(queue) else ""
        facts["message"] = " ".join(t for t in (notice, f"{where['wait_words'].capitalize()}.", left) if t)
        if fleet_routing.is_shared(queue):
            facts["indicative"] = fleet_routing.SHARED_WORDS
        queued = Event.of("queued", 1, **facts).to_wire()
        _store_event(submission, queued)
        transaction.on_commit(lambda: ledger.dispatch(submission, job.to_wire()))
    return submission, queued


def _store_event(submission: Submission, payload: dict) -> bool:
    """Keep one event; False if that seq was already stored (a redelivered task)."""
    try:
        with transaction.atomic():
            SubmissionEvent.objects.create(
                submission=submission, seq=payload["seq"], type=payload["type"], payload=payload
            )
    except IntegrityError:
        return False
    return True


def _broadcast(submission: Submission, *payloads: dict) -> None:
    """Tell the run's viewers these events, in this order, through one trip into the event loop."""
    layer = get_channel_layer()
    if layer is None or not payloads:
        return

    async def send_all() -> None:
        for payload in payloads:
            await layer.group_send(submission.group_name, {"type": "submission.event", "event": payload})

    async_to_sync(send_all)()


def record_event(submission_id: int, payload: dict, attempt: int | None = None) -> None:
    """Store and broadcast one event from a worker (`record_events` with one)."""
    record_events(submission_id, [payload], attempt)


def record_events(submission_id: int, payloads: list[dict], attempt: int | None = None) -> int:
    """Store and broadcast a worker's events of one run, in the order sent; the number stored.

    A worker sends a run's events in batches (`gpu_worker.worker.service._Reporter`): one task, one
    transaction and one lock of the run's row for each batch rather than for each event, so that under a class's
    load the web queue, where every job's claim waits too, is not a queue of single progress events.

    Dropped: an event from an attempt that is not the run's current one, and an event of a finished run
    numbered after its final event. A run's story ends with its final event, stored with its result
    (`record_result`): a straggler numbered after it would be told after the end, so it is not told at all.
    One numbered before it (a report that waited out a database restart in Celery's retries) takes its place
    inside the story. The run's row is locked while the events are stored, so a result cannot land between the
    check and the rows. An event that breaks the contract is dropped alone, with a warning.
    """
    events = []
    for payload in payloads:
        try:
            events.append(Event.model_validate(payload).to_wire())
        except ValidationError as exc:
            log.warning("malformed event for submission %s dropped: %s", submission_id, exc.errors()[0]["msg"])
    if not events:
        return 0
    with transaction.atomic():
        submission = Submission.objects.select_for_update().select_related("exercise").filter(pk=submission_id).first()
        if submission is None:
            log.warning("%d event(s) for unknown submission %s dropped", len(events), submission_id)
            return 0
        if submission.finished:
            stored = [event for event in events if _store_late_event(submission, event, attempt)]
        elif attempt is not None and not ledger.accepts(submission, attempt):
            log.info(
                "%d event(s) of attempt %s of run %s dropped: not its current attempt",
                len(events),
                attempt,
                submission_id,
            )
            return 0
        else:
            now = timezone.now()
            updates: dict[str, Any] = {"last_event_at": now, **ledger.renew(submission, now)}
            if any(event["type"] == "started" for event in events):
                updates |= {"status": Status.RUNNING, "started_at": now}
            Submission.objects.filter(pk=submission.pk).update(**updates)
            stored = [event for event in events if _store_event(submission, event)]
    _broadcast(submission, *stored)
    return len(stored)


def _store_late_event(submission: Submission, event: dict, attempt: int | None) -> bool:
    """A finished run's event: kept only inside its story (numbered before its final event, its attempt's)."""
    final = submission.events.filter(type__in=FINAL_EVENTS).order_by("-seq").values_list("seq", flat=True).first()
    inside = final is not None and event["seq"] < final and event["type"] not in FINAL_EVENTS
    if not inside or (attempt is not None and attempt != submission.attempts):
        log.info("event %s of run %s dropped: after the end of its story", event["seq"], submission.pk)
        return False
    stored = _store_event(submission, event)
    if stored and _merge_listing(submission, event):
        submission.save(update_fields=["result"])
    return stored


LISTED = ("ptx_excerpt", "sass_excerpt")


def _merge_listing(submission: Submission, event: dict) -> bool:
    """A `compiled` event's listing (SASS, PTX and their notes) into the stored result's compile report.

    On the CPU tier the worker sends the verdict before the SASS listing (nvdisasm takes longer than the
    launches), numbered before `done`: a page that loads later reads it from the result. True when merged.
    """
    compile_report = (submission.result or {}).get("compile")
    listed = {k: event[k] for k in LISTED if event.get(k)}
    if event.get("type") != "compiled" or not isinstance(compile_report, dict) or not listed:
        return False
    if all(compile_report.get(k) == v for k, v in listed.items()):
        return False
    notes = list(event.get("notes") or compile_report.get("notes") or [])
    submission.result = {**submission.result, "compile": {**compile_report, **listed, "notes": notes}}
    return True


def record_result(
    submission_id: int, payload: dict, final_event: dict | None = None, attempt: int | None = None
) -> bool:
    """Store a run's result document once, and its final event in the same transaction.

    A reader (the API, a late-joining socket, a test polling the row) sees either a run in progress or a
    finished run whose story ends with `done` (or `error`): never a verdict without its final event. The
    final event is numbered after every event already stored, and broadcast once the transaction commits.

    False, storing nothing, for a run that has its result already (a redelivered result, a rerun's after the
    first) or a report from an attempt that is not the run's current one (`labs.runs.ledger.accepts`).
    """
    result = Result.model_validate(payload)
    with transaction.atomic():
        submission = Submission.objects.select_for_update().filter(pk=submission_id).first()
        if submission is None:
            log.warning("result for unknown submission %s dropped", submission_id)
            return False
        if not ledger.accepts(submission, attempt):
            log.info("result of run %s (attempt %s) dropped: %s", submission_id, attempt, submission.status)
            return False
        infrastructure = result.verdict == Verdict.ERROR
        submission.result = result.to_wire()
        if fleet_routing.is_shared(submission.queue):  # practice on an MPS or time-sliced slice
            submission.result["indicative"] = fleet_routing.SHARED_WORDS
        listed = submission.events.filter(type="compiled").order_by("-seq").first()  # a late listing, here first
        if listed is not None:
            _merge_listing(submission, listed.payload)
        submission.verdict = result.verdict
        submission.status = Status.ERROR if infrastructure else Status.DONE
        submission.finished_at = submission.last_event_at = timezone.now()
        submission.lease_until = None
        fields = ["result", "verdict", "status", "finished_at", "last_event_at", "lease_until"]
        submission.save(update_fields=fields)
        final = _final_event(submission, result, final_event)
        if _store_event(submission, final):
            transaction.on_commit(lambda: _broadcast(submission, final))
    if can_profile(submission) and _first_accepted_on_gpu(submission):  # a learner's first accepted GPU run
        request_profile(submission)
    return True


def _final_event(submission: Submission, result: Result, sent: dict | None) -> dict:
    """The run's last event: the worker's (validated), or one made from the result; numbered after all stored.
    `submission` is the stored run, its status already final (ERROR: an infrastructure failure)."""
    infrastructure = submission.status == Status.ERROR
    if sent is None:
        event = {"type": "error" if infrastructure else "done", "verdict": result.verdict, "message": result.message}
        if "indicative" in submission.result:
            event["indicative"] = submission.result["indicative"]
            event["message"] = f"{result.message} (shared GPU: indicative)".strip()
    else:
        event = dict(sent)
        if event.get("type") not in FINAL_EVENTS:  # a worker's final event is done or error, nothing else
            event["type"] = "error" if infrastructure else "done"
    last = submission.events.order_by("-seq").values_list("seq", flat=True).first() or 0
    event["seq"] = max(int(event.get("seq") or 0), last + 1)
    return Event.model_validate(event).to_wire()


def can_profile(submission: Submission) -> bool:
    """An accepted run on a GPU, not profiled and not waiting for its profile."""
    result = submission.result or {}
    return (
        submission.verdict == Verdict.ACCEPTED
        and result.get("backend") == "cuda"
        and submission.queue.startswith("gpu.")
        and not result.get("profile")
    )


def request_profile(submission: Submission) -> bool:
    """Ask the profile lane for the run's Nsight Compute report; False when it cannot be profiled (or is already).

    The profile runs on `<queue>.profile`, served by a worker of its own beside the verdict worker, so it never
    stands in front of anyone's verdict; its `profile` event streams to the run's viewers and its facts land
    in the result (`record_profile`).
    """
    with transaction.atomic():
        locked = Submission.objects.select_for_update().filter(pk=submission.pk).first()
        if locked is None or not can_profile(locked):
            return False
        locked.result = {**(locked.result or {}), "profile": {"state": "queued"}}
        locked.save(update_fields=["result"])
        job = build_job(locked)
        transaction.on_commit(
            lambda: current_app.send_task(PROFILE_TASK, args=[job.to_wire()], queue=f"{locked.queue}.profile")
        )
    submission.result = locked.result
    return True


def record_profile(submission_id: int, facts: dict) -> None:
    """Keep a profile's facts in the run's result (its event was stored and sent as it came)."""
    with transaction.atomic():
        submission = Submission.objects.select_for_update().filter(pk=submission_id).first()
        if submission is None:
            return
        submission.result = {**(submission.result or {}), "profile": dict(facts)}
        submission.save(update_fields=["result"])


def _first_accepted_on_gpu(submission: Submission) -> bool:
    earlier = Submission.objects.filter(
        owner=submission.owner, exercise=submission.exercise, verdict=Verdict.ACCEPTED, queue__startswith="gpu."
    ).exclude(pk=submission.pk)
    return not earlier.exists()


def _end_as_lost(run: Submission, why: str) -> None:
    message = f"{why} This is a problem on our side, not in your code. Please submit again."
    lost = Result(submission_id=run.pk, verdict="error", backend="sim", device="unknown", message=message)
    record_result(run.pk, lost.to_wire())


def _cap_words() -> str:
    times = settings.WARPLAB_MAX_ATTEMPTS
    return f"This run was started {times} times and its worker was lost each time (worker lost)."


def claim_run(submission_id: int, task_id: str) -> dict:
    """A worker's claim on one delivery of a run's job (`labs.runs.ledger.claim`); past the attempt cap the run ends."""
    claim = ledger.claim(submission_id, task_id)
    if claim.give_up and (run := Submission.objects.filter(pk=submission_id).first()) is not None:
        _end_as_lost(run, _cap_words())
    return claim.to_wire()


def reap_runs() -> dict[str, list[int]]:
    """The ledger's reaper: run lost attempts again (or end them past the cap) and send jobs the broker lost."""
    now = timezone.now()
    report: dict[str, list[int]] = {"requeued": [], "failed": [], "dispatched": []}
    for run in ledger.expired(now):
        if run.attempts >= settings.WARPLAB_MAX_ATTEMPTS or not run.attempts:
            silent = "The worker running this submission stopped answering (worker lost)."
            _end_as_lost(run, _cap_words() if run.attempts else silent)
            report["failed"].append(run.pk)
            continue
        ledger.requeue(run)
        report["requeued"].append(run.pk)
    try:
        reset = ledger.broker_was_reset()
    except redis.RedisError as exc:
        log.warning("the reaper cannot reach the broker: %s", exc)
        return report
    for run in ledger.undelivered(now, reset):
        if ledger.dispatch(run, build_job(run).to_wire()):
            report["dispatched"].append(run.pk)
    return report
