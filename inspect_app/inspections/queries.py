"""What the report forms and pages show about inspections: the checklist and its subjects, the areas'
stabilization clocks, punch lists, pipe videos, notices and who receives reports. Reads only; never writes.

The statements the pages run at every request are built once per process (the `@cache` functions), their values
bound at each run: building a statement, and finding its compiled form, cost about what running it did.
"""
from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass
from functools import cache
from typing import Any

from sqlalchemy import Select, bindparam, func, select

from inspect_app import held_rows, inspection_types, rules
from inspect_app.accounts.models import User
from inspect_app.accounts.policy import allowed, sees
from inspect_app.extensions import db
from inspect_app.inspections.models import Inspection, InspectionNotice, PipeVideo, PunchListItem, made_by_authority
from inspect_app.inspections import wording
from inspect_app.permits.models import Permit, StormwaterStructure
from inspect_app.permits.services import profile_of
from inspect_app.profiles.schema import ChecklistItem, Profile
from inspect_app.rules import calendar, stabilization
from inspect_app.rules.trace import implements
from inspect_app.schedule.facts import load_records
from inspect_app.schedule.models import PermitObligation
from inspect_app.stabilization.models import AreaStatusEvent, DisturbedArea
from inspect_app.templating import humanize, local_time
from inspect_app.types import UTCDateTime
from inspect_app.weather.models import StormEvent


@dataclass(frozen=True)
class Subject:
    """What a checklist item is asked about: the site, or one control, area, structure or pipe run."""

    id: str
    name: str


@dataclass(frozen=True)
class AreaClock:
    """A disturbed area's §380-11 C(3)(a) clock as of one moment."""

    area: DisturbedArea
    status: str
    ceased_at: dt.datetime | None
    deadline: dt.datetime | None
    overdue: bool
    initiate_by: dt.datetime | None = None
    complete_by: dt.datetime | None = None
    initiated_at: dt.datetime | None = None
    breach: str | None = None  # "initiate" or "complete": which duty is past its deadline


def action_for(inspection_type: str) -> str:
    """The policy action needed to perform (and edit) an inspection of this type."""
    return inspection_types.spec(inspection_type).action  # who performs which type: the registry says why


def not_offered(permit: Permit, inspection_type: str) -> str | None:
    """Why an inspection of this type cannot be started on the permit (its town does not offer the type, or the
    type is made only once the permit is completed), or None when it can. Who may start it is the policy's
    question (`action_for`)."""
    profile = profile_of(permit)
    if inspection_type not in inspection_types.TYPES:
        return "Choose one of the town's inspection types."
    if not profile.offers(inspection_type):
        return (f"{profile.town} does not offer this type of inspection ({humanize(inspection_type)}): its rules "
                "define no such inspection. Choose one of the town's inspection types.")
    if inspection_types.spec(inspection_type).after_completion and permit.status != "completed":
        return (f"The {profile.inspection_type(inspection_type).name} is made of a completed project: this "
                "permit has no certificate of completion yet.")
    return None


def startable(permit: Permit) -> list:
    """The town's inspection types (its profile's definitions) that can be started on the permit now."""
    return [kind for kind in profile_of(permit).inspection_types if not_offered(permit, kind.key) is None]


def may_edit(user, inspection: Inspection) -> bool:
    """Whether `user` may fill in this draft: whoever may perform its type on its permit."""
    return allowed(user, action_for(inspection.type), inspection.permit)


def type_of(inspection: Inspection):
    """The profile's definition of the inspection's type (name, citation, checklist)."""
    return profile_of(inspection.permit).inspection_type(inspection.type)


def controls(permit: Permit, details: dict[str, Any]) -> list[Subject]:
    """Erosion controls: the permit's BMP structures, then those listed on the report itself."""
    listed = [Subject(c["id"], c["name"]) for c in details.get("controls", [])]
    return [Subject(s.id, s.name) for s in permit.structures if s.kind == "bmp"] + listed


def underground_structures(permit: Permit) -> list[StormwaterStructure]:
    """Structures that need a pre-bury inspection before backfill (§380-16 C(4)(c))."""
    return [s for s in permit.structures if s.is_underground]


def pipe_runs(permit: Permit) -> list[StormwaterStructure]:
    """Stormwater pipes, each of which needs a dated video at the final inspection (§380-16 C(4)(e)[1])."""
    return [s for s in permit.structures if s.kind == "pipe"]


def covered_structures(permit: Permit, details: dict[str, Any]) -> list[StormwaterStructure]:
    """The underground structures a pre-bury report covers."""
    chosen = details.get("structures", {})
    return [s for s in underground_structures(permit) if chosen.get(s.id, {}).get("covered")]


def subjects(inspection: Inspection, item: ChecklistItem, details: dict[str, Any]) -> list[Subject]:
    """Each subject `item` must be answered for on this report."""
    permit = inspection.permit
    if item.per == "control":
        return controls(permit, details)
    if item.per == "area":
        return [Subject(a.id, a.name) for a in permit.areas]
    if item.per == "structure":
        chosen = (covered_structures(permit, details) if inspection_types.spec(inspection.type).covers == "structure"
                  else permit.structures)
        return [Subject(s.id, s.name) for s in chosen]
    if item.per == "pipe":
        return [Subject(s.id, s.name) for s in pipe_runs(permit)]
    return [Subject("", "Site")]


def checklist(inspection: Inspection, details: dict[str, Any]) -> list[tuple[ChecklistItem, list[Subject]]]:
    """The type's checklist from the town profile, each item with the subjects it is asked for."""
    return [(item, subjects(inspection, item, details)) for item in type_of(inspection).checklist]


@dataclass(frozen=True)
class ChecklistSection:
    """One checklist item as a section of the report form: its subjects, how many are answered, and whether a
    field of it was refused (a section with an error stays open, whatever is answered)."""

    item: ChecklistItem
    subjects: list[Subject]
    answered: int
    refused: bool

    @property
    def done(self) -> bool:
        return self.answered == len(self.subjects) and not self.refused


def checklist_sections(found: list[tuple[ChecklistItem, list[Subject]]],
                       answers: dict[tuple[str, str], tuple[str | None, str | None]],
                       errors: dict[str, str]) -> list[ChecklistSection]:
    """The checklist in sections, each with its progress. A field of an item is `answer-`, `note-` or `fix-`
    followed by the item's key and a hyphen (item keys have none)."""
    refused = {name.split("-", 2)[1] for name in errors
               if name.startswith(("answer-", "note-", "fix-")) and name.count("-") >= 2}
    return [ChecklistSection(item, subjects, sum(1 for s in subjects if answers.get((item.key, s.id), (None,))[0]),
                             item.key in refused) for item, subjects in found]


def first_unanswered(sections: list[ChecklistSection],
                     answers: dict[tuple[str, str], tuple[str | None, str | None]]) -> str | None:
    """The form field of the first checklist answer not given yet, if any."""
    return next((f"answer-{s.item.key}-{subject.id or 'site'}" for s in sections for subject in s.subjects
                 if not answers.get((s.item.key, subject.id), (None,))[0]), None)


@implements("§380-11 C(3)(a)")
def area_clocks(permit: Permit, profile: Profile, at: dt.datetime) -> list[AreaClock]:
    """Each disturbed area with its status at `at` and, once activity ceased, its next stabilization deadline
    (initiate, then complete: CGP 2022 Part 2.2.14.a; §380-11 C(3)(a)), from the schedule engine's rule."""
    tz, holidays = calendar.zone(profile.timezone), calendar.holidays_of(profile)
    clocks = []
    # Every timeline of the permit's areas in one query (which flushes first: a change not yet written is in
    # it), then the areas from the list the report's checklist has read already: not one query per area, and
    # the areas not read twice.
    # Their columns, not the events as objects: a busy area's history is long, and only these are read.
    timelines: dict[str, list[rules.AreaEvent]] = defaultdict(list)
    for area_id, status, changed_at in db.session.execute(_area_timelines(), {"permit_id": permit.id, "at": at}):
        timelines[area_id].append(rules.AreaEvent(status, changed_at))
    for area in permit.areas:
        events = timelines[area.id]
        status = next((e.status for e in sorted(events, key=lambda e: e.at, reverse=True) if e.at <= at),
                      "disturbed")
        found = stabilization.episodes(events, profile.stabilization, tz, holidays, permit.sensitive_waters, at)
        episode = found[-1] if found and found[-1].closed_at is None else None
        if episode is None:
            clocks.append(AreaClock(area, status, None, None, False))
            continue
        # The clause broken, if any: completion past due outranks a late start.
        breach = ("complete" if at > episode.complete_due else
                  "initiate" if episode.initiated is None and at > episode.initiate_due else None)
        clocks.append(AreaClock(area, status, episode.ceased, episode.pending_deadline(), episode.overdue(at),
                                episode.initiate_due, episode.complete_due, episode.initiated, breach))
    return clocks


@cache
def _area_timelines() -> Select:
    """`area_clocks`' statement: the timelines up to the parameter `at` (the clocks as of then ignore what came
    after, `stabilization.episodes`; an old report's page need not read the area's history since)."""
    return (select(AreaStatusEvent.area_id, AreaStatusEvent.status, AreaStatusEvent.at)
            .join(DisturbedArea, AreaStatusEvent.area_id == DisturbedArea.id)
            .where(DisturbedArea.permit_id == bindparam("permit_id"),
                   AreaStatusEvent.at <= bindparam("at", type_=UTCDateTime()))
            .order_by(AreaStatusEvent.at))


def open_punch_items(permit: Permit) -> list[PunchListItem]:
    """Punch-list items from submitted walk-throughs not yet resolved by a final inspection."""
    query = (select(PunchListItem).join(Inspection, PunchListItem.walk_through_id == Inspection.id)
             .where(PunchListItem.permit_id == permit.id, PunchListItem.resolved_in_id.is_(None),
                    Inspection.status == "submitted")
             .order_by(Inspection.performed_at, PunchListItem.description))
    return list(db.session.scalars(query))


def punch_items_of(inspection: Inspection) -> list[PunchListItem]:
    """The punch-list items a walk-through recorded."""
    query = select(PunchListItem).where(PunchListItem.walk_through_id == inspection.id)
    return list(db.session.scalars(query.order_by(PunchListItem.description)))


def videos_of(inspection: Inspection) -> dict[str, PipeVideo]:
    """The final inspection's pipe videos, by pipe-run structure id."""
    if held_rows.none_of(PipeVideo.inspection_id, inspection.id):
        return {}
    query = select(PipeVideo).where(PipeVideo.inspection_id == inspection.id)
    return {v.structure_id: v for v in db.session.scalars(query)}


@dataclass(frozen=True, slots=True)
class ListedReport:
    """A report as the permit page lists it (and offers its PDF): the columns it shows, not the whole record.

    Its rules are the model's own (`Inspection.is_submitted`, `is_blank`, `author_id`, `by_authority`)."""

    id: str
    type: str
    status: str
    performed_at: dt.datetime
    amends_id: str | None
    inspector_name: str
    evaluation: str | None
    notice_given: bool
    blank: bool
    trigger: str | None
    created_by_id: str | None
    inspector_id: str | None
    inspector_role: str | None  # of the inspector's account; None without one

    is_submitted = Inspection.is_submitted
    is_blank = Inspection.is_blank
    author_id = Inspection.author_id

    @property
    def by_authority(self) -> bool:
        return made_by_authority(self.trigger, self.inspector_role)


def inspections_of(permit: Permit) -> list[ListedReport]:
    """Every inspection of `permit`, newest first (by id among those made at the same moment), as listed."""
    return [ListedReport(*row) for row in db.session.execute(_inspections_of(), {"permit_id": permit.id})]


@cache
def _inspections_of() -> Select:
    """`inspections_of`' statement. Not `permit.inspections.select()`: that orders by the relationship's
    `performed_at` first, which put the oldest first. With the inspector's role (whether the authority made it,
    for the 24-hour notice). Only the columns a list shows: loading whole reports took more than the rest of the
    page's reads (tests/test_page_queries.py sees a page that reads a report's other columns one by one)."""
    return (select(Inspection.id, Inspection.type, Inspection.status, Inspection.performed_at, Inspection.amends_id,
                   Inspection.inspector_name, Inspection.evaluation, Inspection.notice_given, Inspection.blank,
                   Inspection.trigger, Inspection.created_by_id, Inspection.inspector_id, User.role)
            .outerjoin(User, Inspection.inspector_id == User.id)
            .where(Inspection.permit_id == bindparam("permit_id"))
            .order_by(Inspection.performed_at.desc(), Inspection.id))


def amendments_of(inspection: Inspection) -> list[Inspection]:
    """The amendments that correct `inspection`, oldest first."""
    if held_rows.none_of(Inspection.amends_id, inspection.id):
        return []
    query = select(Inspection).where(Inspection.amends_id == inspection.id)
    return list(db.session.scalars(query.order_by(Inspection.created_at)))


def amendments_seen_by(user, inspection: Inspection) -> list[Inspection]:
    """The amendments of `inspection` that `user` may see (`sees_report`: submitted, or their own draft), oldest
    first: another person's draft correction is theirs alone until it is signed."""
    return [a for a in amendments_of(inspection) if _readable(user, a)]


def correction_of(inspection: Inspection) -> Inspection | None:
    """The submitted report that corrects `inspection`, or None while `inspection` is the latest version: a report is
    corrected along one line (docs/record-integrity.md: "a new version amends the one before"), so at most one
    submitted amendment stands for each report (one of a line forked before that rule: the newest)."""
    if held_rows.none_of(Inspection.amends_id, inspection.id):
        return None
    return db.session.scalars(select(Inspection).where(
        Inspection.amends_id == inspection.id, Inspection.status == "submitted").order_by(
        Inspection.submitted_at.desc(), Inspection.id).limit(1)).first()


def latest_version(inspection: Inspection) -> Inspection:
    """The end of `inspection`'s line of corrections: itself while no correction of it is signed."""
    seen = {inspection.id}
    while (correction := correction_of(inspection)) is not None and correction.id not in seen:
        inspection = correction
        seen.add(inspection.id)
    return inspection


def correction_words(correction: Inspection, latest: Inspection) -> str:
    """Who corrected a report and when, and when the latest version of its line was signed if that is a later
    one: the first words of why a corrected report is not corrected again (`latest_version`)."""
    since = "" if latest.id == correction.id else (
        f" (corrected again since: the latest version was signed on {local_time(latest.submitted_at)} by "
        f"{latest.signer_name or 'someone'})")
    return (f"{correction.signer_name or 'Someone'} submitted a correction of the report on "
            f"{local_time(correction.submitted_at)}{since}")


def sees_report(user, inspection: Inspection) -> bool:
    """Whether `user` may see a report: submitted, whoever sees its permit; a draft, its author alone
    (accounts/policy.py, `hidden_draft_parts` in SQL)."""
    return sees(user, db.session.get(Permit, inspection.permit_id)) and _readable(user, inspection)


def reports_seen_by(user, permit: Permit) -> list[ListedReport]:
    """The reports of `permit` that `user` may see (`sees_report`), newest first: the permit asked about once."""
    return [i for i in inspections_of(permit) if _readable(user, i)] if sees(user, permit) else []


def _readable(user, inspection: Inspection | ListedReport) -> bool:
    """`sees_report` of a report whose permit `user` sees: submitted, or theirs."""
    return inspection.is_submitted or inspection.author_id == user.id


def amended_by_another(inspection: Inspection) -> str | None:
    """SPEC *Signatures*: "an amendment by another person says so everywhere the document is shown or
    checked": `amendment by C of a report by A` when this report amends one and its author is not the report's
    inspector, (b) A, whose name and credentials it still prints (the page, the PDF, /verify and the permit's
    history all say it). Every version C signs says so, the second correction of one as much as the first; a
    correction by A of C's version is A's own report again. None for an original, or A's own amendment."""
    if inspection.amends_id is None:
        return None
    mine, theirs = inspection.author_id, inspection.inspector_id
    signer = inspection.signer_name or inspection.inspector_name
    same = mine == theirs if mine and theirs else signer == inspection.inspector_name
    return None if same else wording.amendment_words(signer, inspection.inspector_name)


def last_inspection_before(permit: Permit, at: dt.datetime, exclude_id: str | None = None) -> dt.datetime | None:
    """(d) The time of the permit's latest submitted inspection before `at`."""
    values = {"permit_id": permit.id, "at": at} | ({"exclude_id": exclude_id} if exclude_id else {})
    return db.session.scalar(_last_inspection_before(bool(exclude_id)), values)


@cache
def _last_inspection_before(excluding: bool) -> Select:
    """`last_inspection_before`'s statement (`excluding` one report)."""
    query = select(func.max(Inspection.performed_at)).where(
        Inspection.permit_id == bindparam("permit_id"), Inspection.status == "submitted",
        Inspection.performed_at < bindparam("at", type_=UTCDateTime()))
    return query.where(Inspection.id != bindparam("exclude_id")) if excluding else query


def notices_of(permit: Permit) -> list[InspectionNotice]:
    """The permit's 24-hour notices, newest first."""
    if held_rows.none_of(InspectionNotice.permit_id, permit.id):
        return []
    query = select(InspectionNotice).where(InspectionNotice.permit_id == permit.id)
    return list(db.session.scalars(query.order_by(InspectionNotice.given_at.desc())))


@implements("§380-16 C(3)")
def matching_notice(permit: Permit, inspection_type: str, performed_at: dt.datetime,
                    inspection_id: str | None = None) -> tuple[InspectionNotice | None, bool]:
    """The notice that covers an inspection, and whether it came in time (§380-16 C(3)).

    A notice covers the inspections of the local day it announced (its `planned_for`): one announced for another
    day told the DPW Director of another inspection, not of this one (a notice given a month ago for a pre-bury
    never made is no notice of today's; an inspection made the day before the day announced was not announced).
    Notices already used by another report do not count twice. The newest notice given in time wins;
    with none in time, the newest notice given before the inspection is linked and flagged late.
    """
    profile = profile_of(permit)
    hours, tz = profile.advance_notice.hours, calendar.zone(profile.timezone)
    values = {"permit_id": permit.id, "type": inspection_type, "at": performed_at}
    day = performed_at.astimezone(tz).date()
    candidates = [n for n in db.session.scalars(_notices_unused(bool(inspection_id)),
                                                values | ({"inspection_id": inspection_id} if inspection_id else {}))
                  if n.planned_for.astimezone(tz).date() == day]
    in_time = [n for n in candidates if n.given_at <= performed_at - dt.timedelta(hours=hours)]
    if in_time:
        return in_time[0], True
    return (candidates[0] if candidates else None), False


@cache
def _notices_unused(but_by_one: bool) -> Select:
    """`matching_notice`'s statement (the notices no other report uses, `but_by_one` the report of the parameter
    `inspection_id`)."""
    used = select(Inspection.notice_id).where(Inspection.notice_id.is_not(None), Inspection.amends_id.is_(None))
    if but_by_one:
        used = used.where(Inspection.id != bindparam("inspection_id"))
    return (select(InspectionNotice)
            .where(InspectionNotice.permit_id == bindparam("permit_id"),
                   InspectionNotice.inspection_type == bindparam("type"),
                   InspectionNotice.given_at <= bindparam("at", type_=UTCDateTime()), InspectionNotice.id.not_in(used))
            .order_by(InspectionNotice.given_at.desc()))


def authority_addresses(permit: Permit) -> list[str]:
    """Where reports and notices for the authority go: the town's notice address, else its agents."""
    if permit.jurisdiction.notice_email:
        return [permit.jurisdiction.notice_email]
    agents = select(User.email).where(User.role == "agent", User.is_enabled.is_(True),
                                      User.jurisdiction_id == permit.jurisdiction_id)
    return list(db.session.scalars(agents.order_by(User.email)))


def weather_pending(inspection: Inspection) -> bool:
    """Whether (e) the weather at the time is still to come from the station (a gauge gives only (f))."""
    return inspection.weather_status == "pending" or (inspection.weather_status == "gauge"
                                                      and inspection.weather_fetched_at is None)


# -- why the inspection was made, and the storms since the last one (issue 20; CGP 2022 Part 4.7.1) ------

def schedule_in_force(permit: Permit, at: dt.datetime) -> dict[str, str] | None:
    """The erosion-control schedule the permit was under at `at`, as the schedule engine words it."""
    records = load_records(permit_ids=[permit.id], schedule_only=True)
    if not records or records[0].facts is None or records[0].profile is None:
        return None  # a record the engine cannot read: the dashboard shows why
    schedule = rules.schedule_in_force(records[0].facts, records[0].profile, at)
    return {"text": schedule.text, "citation": schedule.citation}


def storm_to_answer(permit: Permit, at: dt.datetime) -> StormEvent | None:
    """The storm whose inspection the schedule has open at `at` (the earliest), if it is a recorded storm event:
    a first inspection opens when the storm reached the threshold, a closing one when it ended."""
    return db.session.scalars(_storm_to_answer(), {"permit_id": permit.id, "at": at}).first()


@cache
def _storm_to_answer() -> Select:
    """`storm_to_answer`'s statement."""
    return (select(StormEvent).join(PermitObligation, (PermitObligation.permit_id == StormEvent.permit_id)
                                    & ((PermitObligation.opens_at == StormEvent.reached_at)
                                       | (PermitObligation.opens_at == StormEvent.ended_at)))
            .where(StormEvent.permit_id == bindparam("permit_id"), PermitObligation.kind == "storm_inspection",
                   PermitObligation.opens_at <= bindparam("at", type_=UTCDateTime()))
            .order_by(PermitObligation.opens_at).limit(1))


@cache
def _storms_since(since: bool) -> tuple[Select, Select]:
    """`storms_of`' two statements (the station's storms, the gauge readings of other reports) up to the
    parameter `at`, and after `since` if `since`."""
    at = bindparam("at", type_=UTCDateTime())
    events = select(StormEvent).where(StormEvent.permit_id == bindparam("permit_id"),
                                      _storm_time(StormEvent.reached_at) <= at)
    gauges = select(Inspection.id, Inspection.performed_at, Inspection.gauge_precip_mm).where(
        Inspection.permit_id == bindparam("permit_id"), Inspection.status == "submitted",
        Inspection.id != bindparam("inspection_id"), Inspection.gauge_precip_mm >= bindparam("threshold"),
        Inspection.performed_at <= at)
    if since:
        after = bindparam("since", type_=UTCDateTime())
        events = events.where(_storm_time(StormEvent.ended_at) > after)
        gauges = gauges.where(Inspection.performed_at > after)
    return events, gauges


def storm_choices(permit: Permit, at: dt.datetime) -> list[StormEvent]:
    """The storms an inspection at `at` may answer: those recorded up to then, newest first (the last 30)."""
    return list(db.session.scalars(_storm_choices(), {"permit_id": permit.id, "at": at}))


@cache
def _storm_choices() -> Select:
    """`storm_choices`' statement."""
    return (select(StormEvent).where(StormEvent.permit_id == bindparam("permit_id"),
                                     _storm_time(StormEvent.reached_at) <= bindparam("at", type_=UTCDateTime()))
            .order_by(StormEvent.day.desc(), StormEvent.reached_at.desc()).limit(30))


def _storm_time(column):
    """A storm event's time by `column` (when it reached the threshold, or ended), or when it was found."""
    return func.coalesce(column, StormEvent.detected_at)


def storm_record(event: StormEvent) -> dict[str, Any]:
    """A storm event as a report keeps it: when, how long, how much, and from which station."""
    hours = None
    if event.started_at is not None and event.ended_at is not None:
        hours = round((event.ended_at - event.started_at).total_seconds() / 3600, 1)
    return {"id": event.id, "source": "station", "station_id": event.station_id, "day": event.day.isoformat(),
            "started_at": _iso(event.started_at), "reached_at": _iso(event.reached_at),
            "ended_at": _iso(event.ended_at), "duration_hours": hours, "depth_mm": event.depth_mm}


def storms_of(inspection: Inspection) -> dict[str, Any]:
    """The storm the inspection answers and every storm since the permit's previous report, as they stand:
    the station's storm events and the on-site gauge readings of the threshold or more (CGP 2022 Part 4.2),
    this report's own among them."""
    permit, at, since = inspection.permit, inspection.performed_at, inspection.last_inspection_at
    threshold = profile_of(permit).storm.threshold_mm
    events, gauges = _storms_since(since is not None)
    values = {"permit_id": permit.id, "at": at} | ({"since": since} if since is not None else {})
    found = [storm_record(e) for e in db.session.scalars(events, values)]
    readings = [(row.id, row.performed_at, row.gauge_precip_mm) for row in db.session.execute(
        gauges, values | {"inspection_id": inspection.id, "threshold": threshold})]
    if inspection.gauge_precip_mm is not None and inspection.gauge_precip_mm >= threshold:
        readings.append((inspection.id, at, inspection.gauge_precip_mm))
    found += [{"id": None, "source": "gauge", "station_id": None, "day": None, "started_at": None,
               "reached_at": None, "ended_at": _iso(read_at), "duration_hours": None, "depth_mm": depth,
               "inspection_id": report_id} for report_id, read_at, depth in readings]
    found.sort(key=lambda s: s["reached_at"] or s["ended_at"] or s["day"] or "")
    linked = db.session.get(StormEvent, inspection.storm_event_id) if inspection.storm_event_id else None
    return {"linked": storm_record(linked) if linked is not None else None, "since_last": found}


def _iso(value: dt.datetime | None) -> str | None:
    return value.astimezone(dt.UTC).isoformat() if value is not None else None
