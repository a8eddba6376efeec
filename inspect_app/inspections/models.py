"""Inspections (§380-16 C(4)), their checklist answers, 24-hour notices and final pipe videos; and what a report
finds: findings, the corrective actions they open (CGP 2022 Part 5) and a walk-through's punch list, the parts of
the report's record (the findings domain's services work on them).
"""
from __future__ import annotations

import datetime as dt
from typing import Any, ClassVar

from sqlalchemy import (
    JSON, Boolean, CheckConstraint, ColumnElement, ForeignKey, Index, Integer, String, Text, UniqueConstraint, false,
    func, literal_column, select, text,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from inspect_app import inspection_types
from inspect_app.accounts.records import DraftPart
from inspect_app.extensions import db
from inspect_app.labels import ACTION_KIND_LABELS, ANSWER_LABELS, EVALUATION_LABELS, SEVERITY_LABELS, TRIGGER_LABELS
from inspect_app.types import UTCDateTime, choice, new_id, utcnow

INSPECTION_TYPES = inspection_types.KEYS  # declared once, in the registry
INSPECTION_STATUSES = ("draft", "submitted")
EVALUATIONS = tuple(EVALUATION_LABELS)
WEATHER_STATUSES = ("pending", "complete", "incomplete", "gauge")
# The weather the inspector writes down on site: a line or two (conditions, temperature, wind as seen).
OBSERVED_WEATHER_LENGTH = 300
ANSWERS = tuple(ANSWER_LABELS)
TRIGGERS = tuple(TRIGGER_LABELS)
SEVERITIES = tuple(SEVERITY_LABELS)
FINDING_STATUSES = ("open", "corrected", "returned")
ACTION_KINDS = tuple(ACTION_KIND_LABELS)
ACTION_STATUSES = ("open", "completed", "verified")


# A finding's citation holds this many characters; a longer one (a profile's may hold 200) is cut to fit.
CITATION_LENGTH = 120


def made_by_authority(trigger: str | None, inspector_role: str | None) -> bool:
    """`Inspection.by_authority` from the report's trigger and its inspector's role (None: no account)."""
    return trigger == "random" or inspector_role in ("agent", "admin")


class Inspection(db.Model):
    """One inspection report. Once submitted it is the legal record and never changes."""

    __tablename__ = "inspections"
    __table_args__ = (
        CheckConstraint("gauge_precip_mm IS NULL OR gauge_precip_mm >= 0", name="gauge_not_negative"),
        # The schedule engine asks, per permit, for its latest submitted reports of each type.
        Index("ix_inspections_schedule", "permit_id", "type", "status", "amends_id", "performed_at"),
        # Partial indexes of the few rows a state-wide record asks about by themselves. They hold only those
        # rows, so the database never takes them for a lookup of the many (`status = 'submitted'`,
        # `amends_id IS NULL`), which the indexes by permit answer.
        # The drafts, which are their authors' alone: every list and the schedule leave them out
        # (`is_draft`, accounts.policy.hidden_draft_parts). Without it, finding them read every report of
        # every permit, in every commit that changes a permit's record.
        Index("ix_inspections_drafts", "status", sqlite_where=text("status = 'draft'"),
              postgresql_where=text("status = 'draft'")),
        # Whether a report is corrected by an amendment is asked of each report (schedule.facts).
        Index("ix_inspections_amendments", "amends_id", sqlite_where=text("amends_id IS NOT NULL"),
              postgresql_where=text("amends_id IS NOT NULL")),
    )
    # A draft is its author's alone (accounts/policy.py): every other user's drafts are hidden from them.
    draft_parts: ClassVar = (DraftPart("inspections", lambda user_id, _: _others_drafts(user_id)),)
    blob_columns: ClassVar = ("signature_sha256", "permittee_signature_sha256")

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    permit_id: Mapped[str] = mapped_column(ForeignKey("permits.id"), index=True)
    type: Mapped[str] = mapped_column(choice("inspection_type", *INSPECTION_TYPES))
    status: Mapped[str] = mapped_column(choice("inspection_status", *INSPECTION_STATUSES), default="draft")
    # (a) date and location
    performed_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, index=True)
    latitude: Mapped[float | None]
    longitude: Mapped[float | None]
    location_source: Mapped[str] = mapped_column(choice("location_source", "device", "permit"),
                                                 default="permit")
    # (b) inspector's name and credentials, copied so the report keeps them if the account changes
    inspector_id: Mapped[str | None] = mapped_column(ForeignKey("users.id"), index=True)
    inspector_name: Mapped[str] = mapped_column(String(120))
    inspector_credentials: Mapped[str] = mapped_column(String(300))
    # CGP 2022 Part 4.7.1 (issue 20): the inspector's title, company and contact, copied like the name.
    inspector_title: Mapped[str | None] = mapped_column(String(120))
    inspector_organization: Mapped[str | None] = mapped_column(String(200))
    inspector_contact: Mapped[str | None] = mapped_column(String(300))
    # When the inspection ended (it started at `performed_at`) and the phase of construction it found.
    ended_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    construction_phase: Mapped[str | None] = mapped_column(String(200))
    # Why it was made: the trigger, and the schedule in force then as the schedule engine words it
    # ({"text", "citation"}); kept with the report so the record says what applied on the day.
    trigger: Mapped[str | None] = mapped_column(choice("inspection_trigger", *TRIGGERS))
    schedule_in_force: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    # The storm a storm-event inspection answers (`storm_event_id`) and every storm since the last report,
    # as they stood when the report was made: {"linked": {...} | None, "since_last": [{...}, ...]}.
    storms: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    # (d) date of last inspection, computed when the report is submitted
    last_inspection_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    # (e), (f) weather at the time and precipitation in the previous 24 hours (stored in SI units)
    weather_status: Mapped[str] = mapped_column(choice("weather_status", *WEATHER_STATUSES),
                                                default="pending")
    temperature_c: Mapped[float | None]
    conditions: Mapped[str | None] = mapped_column(String(80))
    wind_kmh: Mapped[float | None]
    wind_direction_deg: Mapped[float | None]
    precip_24h_mm: Mapped[float | None]
    precip_hours: Mapped[int | None]
    station_id: Mapped[str | None] = mapped_column(String(20))
    station_name: Mapped[str | None] = mapped_column(String(120))
    station_distance_m: Mapped[float | None]
    weather_sources: Mapped[str | None] = mapped_column(String(200))
    weather_attribution: Mapped[str | None] = mapped_column(String(300))
    weather_fetched_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    # Spec "Weather": each parameter from the nearest station with data for it: a list of
    # {"parameter", "station_id", "name", "distance_m", "hours"} (hours of the window it covered).
    weather_stations: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON)
    # True while the values are what was published at the time (hours still missing): provisional.
    weather_provisional: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    gauge_precip_mm: Mapped[float | None]
    # (e) as the inspector observed it on site (§380-16 C(4)(f)[1][e]): required when the station has not
    # reported by the time the report is signed; the station's values are kept beside it, never in its place.
    observed_weather: Mapped[str | None] = mapped_column(String(OBSERVED_WEATHER_LENGTH))
    # (g) evaluation and (h) steps to correct
    evaluation: Mapped[str | None] = mapped_column(choice("evaluation", *EVALUATIONS))
    corrective_steps: Mapped[str | None] = mapped_column(Text)
    notes: Mapped[str | None] = mapped_column(Text)
    # The type's own part (existing conditions, storm date and depth, engineer's certification ...).
    details: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    # §380-16 C(3): notice to the authority at least 24 hours ahead.
    notice_id: Mapped[str | None] = mapped_column(ForeignKey("inspection_notices.id"))
    notice_given: Mapped[bool] = mapped_column(Boolean, default=False)
    under_stop_work: Mapped[bool] = mapped_column(Boolean, default=False)
    storm_event_id: Mapped[str | None] = mapped_column(ForeignKey("storm_events.id"))
    # Signature and certification statement
    signature_sha256: Mapped[str | None] = mapped_column(String(64))
    signer_name: Mapped[str | None] = mapped_column(String(120))
    signer_credentials: Mapped[str | None] = mapped_column(String(300))
    certification_statement: Mapped[str | None] = mapped_column(Text)
    signed_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    # The permittee's authorized signatory's signature, where the town's profile asks for it
    # (`permittee_signs`); signed on the same report, before it is submitted, under the same statement.
    permittee_signer_name: Mapped[str | None] = mapped_column(String(120))
    permittee_signer_title: Mapped[str | None] = mapped_column(String(120))
    permittee_signature_sha256: Mapped[str | None] = mapped_column(String(64))
    submitted_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    record_sha256: Mapped[str | None] = mapped_column(String(64))
    # The hash, at signing, of the parts of the report kept in rows of their own (its answers, findings and their
    # actions, photos, punch list, videos: `canonical.PARTS`), which the report's guard does not cover: written
    # once, so `flask audit verify` and a weather fill find any changed since (None: signed before it was kept).
    parts_sha256: Mapped[str | None] = mapped_column(String(64))
    # A correction of a submitted report is a new report that points at it.
    amends_id: Mapped[str | None] = mapped_column(ForeignKey("inspections.id"))
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    created_by_id: Mapped[str | None] = mapped_column(ForeignKey("users.id"))
    # Made by a tap on Start and nothing kept in it since by its author (a save of the draft or the submission
    # clears it). A report made any other way (a device's first save, an amendment) is kept as it is made. A
    # blank draft owes no report, is nobody's document, and the next Start opens it again.
    blank: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # How many times the draft was saved: a page sends the count it was made at, and a save from a page older than
    # the last save (another tab's, another device's) is refused, not kept over it (reporting/views.py).
    revision: Mapped[int] = mapped_column(Integer, default=0, server_default="0")

    permit = relationship("Permit", back_populates="inspections")
    inspector = relationship("User", foreign_keys=[inspector_id])
    answers: Mapped[list[ChecklistAnswer]] = relationship(
        back_populates="inspection", cascade="all, delete-orphan", order_by="ChecklistAnswer.item_key"
    )
    findings = relationship("Finding", back_populates="inspection", order_by="Finding.created_at")
    amends = relationship("Inspection", remote_side=[id])
    notice = relationship("InspectionNotice", foreign_keys=[notice_id])

    @classmethod
    def is_draft(cls) -> ColumnElement[bool]:
        """SQL: a draft report. The value is written out, not a parameter, so that the database may use the
        partial index of drafts (`ix_inspections_drafts`): a plan PostgreSQL keeps for any value of a parameter
        cannot use an index that holds only some values."""
        return cls.status == literal_column("'draft'")

    @property
    def is_submitted(self) -> bool:
        return self.status == "submitted"

    @property
    def is_blank(self) -> bool:
        """A draft made by Start that its author has not kept anything in yet (see `blank`)."""
        return self.status == "draft" and self.blank

    @property
    def by_authority(self) -> bool:
        """An inspection the authority makes itself: a random one (§380-16 C(4)(b)[2]) or one by the town's own
        agent ("The DPW Director may also be conducting their own inspections", C(4)(f)). §380-16 C(3)'s 24-hour
        notice is given by the project design engineer to the town, so none is owed for these."""
        return made_by_authority(self.trigger, self.inspector.role if self.inspector is not None else None)

    @property
    def author_id(self) -> str | None:
        """Who wrote the report: who started it (or opened the amendment); its inspector if that is not known."""
        return self.created_by_id or self.inspector_id

    @property
    def precipitation_mm(self) -> float | None:
        """The 24-hour precipitation the report stands on: an on-site gauge reading wins."""
        return self.gauge_precip_mm if self.gauge_precip_mm is not None else self.precip_24h_mm


class ChecklistAnswer(db.Model):
    """An answer to one checklist item of the town profile, for the site or one of its parts."""

    __tablename__ = "checklist_answers"
    __table_args__ = (
        UniqueConstraint("inspection_id", "item_key", "subject_id", name="uq_answer_item_subject"),
    )
    draft_parts: ClassVar = (DraftPart("checklist_answers", lambda _, hidden: select(ChecklistAnswer.id).where(
        ChecklistAnswer.inspection_id.in_(hidden["inspections"])), after=("inspections",)),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    inspection_id: Mapped[str] = mapped_column(ForeignKey("inspections.id"), index=True)
    item_key: Mapped[str] = mapped_column(String(60))
    # "" for a site-wide item; else the disturbed area, structure or control it is about.
    subject_id: Mapped[str] = mapped_column(String(36), default="")
    answer: Mapped[str] = mapped_column(choice("checklist_answer", *ANSWERS))
    note: Mapped[str | None] = mapped_column(Text)

    inspection: Mapped[Inspection] = relationship(back_populates="answers")


class InspectionNotice(db.Model):
    """The engineer's notice to the authority at least 24 hours before an inspection (§380-16 C(3))."""

    __tablename__ = "inspection_notices"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    permit_id: Mapped[str] = mapped_column(ForeignKey("permits.id"), index=True)
    inspection_type: Mapped[str] = mapped_column(choice("notice_inspection_type", *INSPECTION_TYPES))
    planned_for: Mapped[dt.datetime] = mapped_column(UTCDateTime)
    given_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    given_by_id: Mapped[str | None] = mapped_column(ForeignKey("users.id"))
    sent_to: Mapped[str | None] = mapped_column(String(254))
    note: Mapped[str | None] = mapped_column(Text)

    permit = relationship("Permit")
    given_by = relationship("User")

    @property
    def hours_ahead(self) -> float:
        return (self.planned_for - self.given_at).total_seconds() / 3600


class PipeVideo(db.Model):
    """Final inspection: a dated video inspection of a stormwater pipe run (§380-16 C(4)(e))."""

    __tablename__ = "pipe_videos"
    blob_columns: ClassVar = ("blob_sha256",)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    inspection_id: Mapped[str] = mapped_column(ForeignKey("inspections.id"), index=True)
    structure_id: Mapped[str] = mapped_column(ForeignKey("stormwater_structures.id"))
    recorded_on: Mapped[dt.date]
    blob_sha256: Mapped[str | None] = mapped_column(String(64))
    reference: Mapped[str | None] = mapped_column(String(300))
    note: Mapped[str | None] = mapped_column(Text)
    revision: Mapped[int] = mapped_column(Integer, default=1)

    structure = relationship("StormwaterStructure")

    @staticmethod
    def blob_rows_seen(permits, hidden):
        """A video is seen by who sees its report."""
        reports = select(Inspection.id).where(Inspection.permit_id.in_(permits),
                                              Inspection.id.not_in(hidden["inspections"]))
        return PipeVideo.inspection_id.in_(reports)



class Finding(db.Model):
    __tablename__ = "findings"
    # A draft's findings are its author's alone, as the draft is (accounts/policy.py).
    draft_parts: ClassVar = (DraftPart("findings", lambda _, hidden: select(Finding.id).where(
        Finding.inspection_id.in_(hidden["inspections"])), after=("inspections",)),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    inspection_id: Mapped[str] = mapped_column(ForeignKey("inspections.id"), index=True)
    permit_id: Mapped[str] = mapped_column(ForeignKey("permits.id"), index=True)
    description: Mapped[str] = mapped_column(Text)
    location: Mapped[str | None] = mapped_column(String(300))
    severity: Mapped[str] = mapped_column(choice("finding_severity", *SEVERITIES), default="minor")
    is_violation: Mapped[bool] = mapped_column(Boolean, default=False)
    citation: Mapped[str | None] = mapped_column(String(CITATION_LENGTH))
    area_id: Mapped[str | None] = mapped_column(ForeignKey("disturbed_areas.id"))
    structure_id: Mapped[str | None] = mapped_column(ForeignKey("stormwater_structures.id"))
    # Made by the app itself (e.g. an area past its stabilization deadline), not typed by a person.
    is_automatic: Mapped[bool] = mapped_column(Boolean, default=False)
    status: Mapped[str] = mapped_column(choice("finding_status", *FINDING_STATUSES), default="open")
    agent_comment: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)

    inspection = relationship("Inspection", back_populates="findings")
    actions: Mapped[list[CorrectiveAction]] = relationship(back_populates="finding")


class CorrectiveAction(db.Model):
    __tablename__ = "corrective_actions"
    # The actions opened on a draft's findings, and the photos that are their evidence.
    draft_parts: ClassVar = (
        DraftPart("corrective_actions", lambda _, hidden: select(CorrectiveAction.id).where(
            CorrectiveAction.finding_id.in_(hidden["findings"])), after=("findings",)),
        DraftPart("photos", lambda _, hidden: select(CorrectiveAction.evidence_photo_id).where(
            CorrectiveAction.finding_id.in_(hidden["findings"]), CorrectiveAction.evidence_photo_id.is_not(None)),
            after=("findings",)),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    finding_id: Mapped[str] = mapped_column(ForeignKey("findings.id"), index=True)
    permit_id: Mapped[str] = mapped_column(ForeignKey("permits.id"), index=True)
    kind: Mapped[str] = mapped_column(choice("action_kind", *ACTION_KINDS))
    description: Mapped[str] = mapped_column(Text)
    owner_id: Mapped[str | None] = mapped_column(ForeignKey("users.id"))
    owner_name: Mapped[str] = mapped_column(String(200))
    discovered_at: Mapped[dt.datetime] = mapped_column(UTCDateTime)
    # CGP Part 5.2: next business day for routine maintenance, 7 calendar days otherwise.
    due_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, index=True)
    status: Mapped[str] = mapped_column(choice("action_status", *ACTION_STATUSES), default="open")
    completed_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    closeout_note: Mapped[str | None] = mapped_column(Text)
    evidence_photo_id: Mapped[str | None] = mapped_column(ForeignKey("photos.id"))
    verified_by_id: Mapped[str | None] = mapped_column(ForeignKey("users.id"))
    verified_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    revision: Mapped[int] = mapped_column(Integer, default=1)
    # When the action was recorded (CGP 2022 Part 5.4: documented within 24 hours of discovery).
    created_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime, default=utcnow)

    finding: Mapped[Finding] = relationship(back_populates="actions")
    owner = relationship("User", foreign_keys=[owner_id])
    verified_by = relationship("User", foreign_keys=[verified_by_id])

    def is_overdue(self, now: dt.datetime) -> bool:
        return self.completed_at is None and now > self.due_at


class PunchListItem(db.Model):
    """An item left at the walk-through, which the final inspection must resolve (§380-16 C(4)(d))."""

    __tablename__ = "punch_list_items"
    draft_parts: ClassVar = (DraftPart("punch_list_items", lambda _, hidden: select(PunchListItem.id).where(
        PunchListItem.walk_through_id.in_(hidden["inspections"])), after=("inspections",)),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    permit_id: Mapped[str] = mapped_column(ForeignKey("permits.id"), index=True)
    walk_through_id: Mapped[str] = mapped_column(ForeignKey("inspections.id"), index=True)
    description: Mapped[str] = mapped_column(Text)
    resolved_in_id: Mapped[str | None] = mapped_column(ForeignKey("inspections.id"))
    resolved_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    resolution: Mapped[str | None] = mapped_column(Text)

def _others_drafts(user_id: str | None):
    """The drafts of others than the user with `user_id` (None: every draft); a draft's author is who
    started it."""
    author = func.coalesce(Inspection.created_by_id, Inspection.inspector_id, "")
    reports = select(Inspection.id).where(Inspection.is_draft())
    if user_id is not None:
        reports = reports.where(author != user_id)
    return reports
